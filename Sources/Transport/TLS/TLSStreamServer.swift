import Synchronization

/// A TLS listener whose connections carry plain byte streams (`TLSStream`), on its own reactor
/// thread: the mock's binary gateway and feedback service. Every accepted connection that
/// finishes its handshake goes to `onConnection` on that thread. `stop()` closes them all.
/// Sendable: the cross-thread surface is the reactor's `execute` and immutable values.
public final class TLSStreamServer: Sendable {
    /// The address listened on (with the port the kernel picked for port 0).
    public let address: SocketAddress
    private let reactor: Reactor
    private let stopped = Atomic<Bool>(false)

    /// Listens on `address` with `context` (a server context; give it `clientCertificateTrust`
    /// to require client certificates) and starts the reactor thread. `onConnection` runs on it.
    public static func start(address: SocketAddress, context: TLSContext, threadName: String,
                             onConnection: @escaping @Sendable (TLSStream) -> Void) throws(SocketError) -> TLSStreamServer {
        let listener = try Socket.listen(on: address)
        let bound = try listener.localAddress()
        let reactor = try Reactor.start(name: threadName)
        let acceptor = ThreadBound(TLSStreamAcceptor(reactor: reactor, listener: listener, context: context,
                                                     onConnection: onConnection))
        let registered = Rendezvous<Result<Void, SocketError>>()
        reactor.execute {
            do throws(SocketError) {
                try reactor.register(listener.fd, interest: .readable, handler: acceptor.value)
                registered.fulfil(.success(()))
            } catch {
                registered.fulfil(.failure(error))
            }
        }
        if case .failure(let failure) = registered.wait() ?? .failure(.reactorStopped) {
            reactor.stop()
            reactor.join()
            throw failure
        }
        return TLSStreamServer(address: bound, reactor: reactor)
    }

    private init(address: SocketAddress, reactor: Reactor) {
        self.address = address
        self.reactor = reactor
    }

    deinit { stop() }

    /// Runs `body` on the server's thread (where its connections' state lives) and returns its result.
    public func onServerThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result? {
        if stopped.load(ordering: .acquiring) { return nil }
        let result = Rendezvous<Result>()
        reactor.execute { result.fulfil(body()) }
        return result.wait()
    }

    /// Stops accepting and closes every connection (each handler's `onReactorStop`), then joins the
    /// thread. Later calls do nothing. Any thread but the server's own.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        reactor.stop()
        reactor.join()
    }
}

/// Accepts connections and drives their handshakes; a client that fails TLS (no certificate, one
/// from another CA) is dropped before it becomes a stream.
private final class TLSStreamAcceptor: ReactorHandler {
    private let reactor: Reactor
    private let listener: Socket
    private let context: TLSContext
    private let onConnection: (TLSStream) -> Void
    private var open = true

    init(reactor: Reactor, listener: Socket, context: TLSContext, onConnection: @escaping (TLSStream) -> Void) {
        self.reactor = reactor
        self.listener = listener
        self.context = context
        self.onConnection = onConnection
    }

    func onReadable() {
        while open, let socket = try? listener.accept() {
            let peer = (try? socket.peerAddress().description) ?? "client"
            guard let tls = try? TLSSession(server: context, socket: socket, peer: peer) else {
                socket.close()
                continue
            }
            tls.startHandshake(on: reactor, timeout: .seconds(10)) { [weak self] result in
                guard let self, self.open, case .success = result else { return tls.close() }
                self.onConnection(TLSStream(session: tls, reactor: self.reactor))
            }
        }
    }

    func onWritable() {}
    func onHangup() {}

    func onReactorStop() {
        guard open else { return }
        open = false
        reactor.deregister(listener.fd)
        listener.close()
    }
}
