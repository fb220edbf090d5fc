import Glibc
import Synchronization

/// Where an `H2Server`'s certificate comes from.
public enum H2ServerIdentity: Sendable {
    /// A PEM certificate chain file and its unencrypted PEM private key file.
    case pemFiles(certificate: String, key: String)
    /// A fresh in-memory CA and a server certificate it issues for `hosts` (IP literals and names):
    /// clients trust `H2Server.certificateAuthority`.
    case ephemeral(hosts: [String])
    /// A certificate already loaded.
    case identity(TLSIdentity)
}

/// An HTTP/2 server over TLS on its own reactor thread: a listening socket, a TLS handshake per
/// accepted connection (h2 is spoken after TLS whether or not the client offered ALPN), one
/// `H2ServerSession` per connection, and an application (`H2ServerDelegate`) that answers.
///
/// It knows nothing of APNs. Start it with `start`, reach its delegate with `withDelegate`, end it
/// with `stop()` (GOAWAY to every connection, close, join the thread).
/// Sendable: the cross-thread surface is the reactor's `execute`, atomics and immutable values.
public final class H2Server<Delegate: H2ServerDelegate>: Sendable {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// Where to listen; port 0 picks a free port (read `address` after start).
        public var address: SocketAddress
        /// The server certificate: from files, or an ephemeral CA's.
        public var identity: H2ServerIdentity
        /// When set, clients must present a certificate issued by these CAs (mutual TLS).
        public var clientCertificateTrust: TLSTrust?
        /// Every connection's session settings (its initial SETTINGS_MAX_CONCURRENT_STREAMS, ...).
        public var session: H2ServerSession.Configuration
        /// A client that has not finished TLS by then is dropped.
        public var handshakeTimeout: Duration
        /// The reactor thread's name (15 bytes show in `top -H`).
        public var threadName: String

        /// A configuration; everything but the address and identity has a default.
        public init(address: SocketAddress, identity: H2ServerIdentity, clientCertificateTrust: TLSTrust? = nil,
                    session: H2ServerSession.Configuration = .init(), handshakeTimeout: Duration = .seconds(10),
                    threadName: String = "h2-server") {
            self.address = address
            self.identity = identity
            self.clientCertificateTrust = clientCertificateTrust
            self.session = session
            self.handshakeTimeout = handshakeTimeout
            self.threadName = threadName
        }
    }

    /// The address listened on (with the port the kernel picked for port 0).
    public let address: SocketAddress
    /// The ephemeral CA of `.ephemeral` identities (write it for clients with `writeCertificate`).
    public let certificateAuthority: CertificateAuthority?
    private let reactor: Reactor
    private let core: ThreadBound<H2ServerCore<Delegate>>
    private let counters: H2ServerCounters
    private let stopped = Atomic<Bool>(false)

    /// Loads or makes the certificate, listens, and starts the reactor thread; `makeDelegate` runs on
    /// that thread before the first connection is accepted. Throws when the certificate cannot be
    /// loaded or the address cannot be listened on.
    public static func start(_ configuration: Configuration,
                             makeDelegate: @escaping @Sendable () -> Delegate) throws(H2ServerError) -> H2Server {
        var authority: CertificateAuthority?
        let identity: TLSIdentity
        let context: TLSContext
        do {
            switch configuration.identity {
            case let .pemFiles(certificate, key):
                identity = try TLSIdentity.load(certificateFile: certificate, keyFile: key)
            case let .ephemeral(hosts):
                let ca = try CertificateAuthority(commonName: "apns-bulk mock CA")
                authority = ca
                identity = try ca.issueServerCertificate(hosts: hosts.isEmpty ? ["127.0.0.1"] : hosts)
            case let .identity(given):
                identity = given
            }
            context = try TLSContext.server(identity: identity, options: TLSServerOptions(
                alpnProtocols: ["h2"], clientCertificateTrust: configuration.clientCertificateTrust))
        } catch {
            throw .tls(error)
        }
        let listener: Socket
        let address: SocketAddress
        let reactor: Reactor
        do {
            listener = try Socket.listen(on: configuration.address)
            address = try listener.localAddress()
            reactor = try Reactor.start(name: configuration.threadName)
        } catch {
            throw .socket(error)
        }
        let counters = H2ServerCounters()
        let core = H2ServerCore<Delegate>(reactor: reactor, listener: listener, context: context,
                                          configuration: configuration, counters: counters)
        let bound = ThreadBound(core)
        let registered = Rendezvous<Result<Void, SocketError>>()
        reactor.execute {
            let core = bound.value
            let delegate = makeDelegate()
            core.delegate = delegate
            do throws(SocketError) {
                try reactor.register(listener.fd, interest: .readable, handler: core)
                delegate.serverStarted(H2ServerTimers(reactor: reactor))
                registered.fulfil(.success(()))
            } catch {
                registered.fulfil(.failure(error))
            }
        }
        if case .failure(let failure) = registered.wait() ?? .failure(.reactorStopped) {
            reactor.stop()
            reactor.join()
            throw .socket(failure)
        }
        return H2Server(address: address, certificateAuthority: authority, reactor: reactor, core: bound,
                        counters: counters)
    }

    private init(address: SocketAddress, certificateAuthority: CertificateAuthority?, reactor: Reactor,
                 core: ThreadBound<H2ServerCore<Delegate>>, counters: H2ServerCounters) {
        self.address = address
        self.certificateAuthority = certificateAuthority
        self.reactor = reactor
        self.core = core
        self.counters = counters
    }

    deinit { stop() }

    /// Connections whose TLS handshake completed, since start.
    public var connectionsAccepted: Int { counters.accepted.load(ordering: .relaxed) }
    /// Connections open now.
    public var connectionsOpen: Int { counters.open.load(ordering: .relaxed) }

    /// Runs `body` with the delegate on the reactor thread and returns its result; nil once the
    /// server has stopped.
    public func withDelegate<Result: Sendable>(_ body: @escaping @Sendable (Delegate) -> Result) -> Result? {
        if stopped.load(ordering: .acquiring) { return nil }
        let result = Rendezvous<Result>()
        let core = self.core
        reactor.execute {
            guard let delegate = core.value.delegate else { return result.abandon() }
            result.fulfil(body(delegate))
        }
        return result.wait()
    }

    /// Stops accepting, tells the delegate (`serverStopping`), sends GOAWAY to every connection and
    /// closes it, then ends and joins the reactor thread. Later calls do nothing. Any thread but the
    /// server's own.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let done = Rendezvous<Bool>()
        let core = self.core
        reactor.execute {
            core.value.shutDown()
            done.fulfil(true)
        }
        _ = done.wait()
        reactor.stop()
        reactor.join()
    }
}

/// Why a server could not start.
public enum H2ServerError: Error, Sendable, CustomStringConvertible {
    case tls(TLSError)
    case socket(SocketError)

    /// One line for the command line's error message.
    public var description: String {
        switch self {
        case .tls(let error): error.description
        case .socket(let error): error.description
        }
    }
}

final class H2ServerCounters: Sendable {
    let accepted = Atomic<Int>(0)
    let open = Atomic<Int>(0)
}

/// The reactor-side state of an `H2Server`: the listener and the open connections.
final class H2ServerCore<Delegate: H2ServerDelegate>: ReactorHandler {
    var delegate: Delegate?
    private let reactor: Reactor
    private let listener: Socket
    private let context: TLSContext
    private let configuration: H2Server<Delegate>.Configuration
    private let counters: H2ServerCounters
    private var connections: [UInt64: H2ServerConnection] = [:]
    private var nextID: UInt64 = 1
    private var accepting = true

    init(reactor: Reactor, listener: Socket, context: TLSContext,
         configuration: H2Server<Delegate>.Configuration, counters: H2ServerCounters) {
        self.reactor = reactor
        self.listener = listener
        self.context = context
        self.configuration = configuration
        self.counters = counters
    }

    func onReadable() {
        while accepting, let socket = try? listener.accept() {
            let peer = (try? socket.peerAddress().description) ?? "client"
            guard let tls = try? TLSSession(server: context, socket: socket, peer: peer) else { continue }
            tls.startHandshake(on: reactor, timeout: configuration.handshakeTimeout) { [weak self] result in
                guard let self, case .success = result else { return }
                self.handshakeCompleted(tls)
            }
        }
    }

    private func handshakeCompleted(_ tls: TLSSession) {
        guard accepting, let delegate else { return tls.close() }
        let id = nextID
        nextID += 1
        let connection: H2ServerConnection
        do {
            connection = try H2ServerConnection(id: id, tls: tls, reactor: reactor, session: configuration.session) {
                [weak self] closed in self?.connectionClosed(closed)
            }
        } catch {
            return tls.close()
        }
        connections[id] = connection
        counters.accepted.add(1, ordering: .relaxed)
        counters.open.add(1, ordering: .relaxed)
        do {
            try connection.open(handler: delegate.connectionOpened(connection))
        } catch {
            connection.close()
        }
    }

    private func connectionClosed(_ connection: H2ServerConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        counters.open.subtract(1, ordering: .relaxed)
    }

    func shutDown() {
        guard accepting else { return }
        accepting = false
        reactor.deregister(listener.fd)
        listener.close()
        delegate?.serverStopping()
        for connection in Array(connections.values) { connection.shutDown() }
    }

    func onWritable() {}
    func onHangup() {}
    func onReactorStop() { shutDown() }
}

/// A value handed from the reactor thread to a waiting thread. Polls with short sleeps: it is for
/// start, stop and statistics, never for the request path.
final class Rendezvous<Value: Sendable>: Sendable {
    private let state = Mutex<(done: Bool, value: Value?)>((false, nil))

    func fulfil(_ value: Value) { state.withLock { $0 = (true, value) } }
    func abandon() { state.withLock { $0.done = true } }

    /// The value, or nil when abandoned or after `seconds`.
    func wait(seconds: Double = 30) -> Value? {
        let deadline = Reactor.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while Reactor.monotonicNanoseconds() < deadline {
            if let result = state.withLock({ $0.done ? Optional($0.value) : nil }) { return result }
            usleep(200)
        }
        return nil
    }
}
