import Glibc

extension Socket {
    /// Opens a non-blocking TCP connection to `address`, bounded by `timeout` on the reactor's clock.
    ///
    /// Reactor thread only. `completion` runs later on the reactor thread (never inside this call),
    /// exactly once: with the connected socket (TCP_NODELAY set, not registered anywhere, so the
    /// caller registers it with its own handler) or with `.connectFailed` / `.connectTimedOut` /
    /// `.reactorStopped`.
    public static func connect(to address: SocketAddress, timeout: Duration, on reactor: Reactor,
                               completion: @escaping (Result<Socket, SocketError>) -> Void) {
        let fd = Glibc.socket(address.addressFamily, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                              | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            let failure = SocketError.system(call: "socket", errno: errno)
            reactor.schedule(after: .zero) { completion(.failure(failure)) }
            return
        }
        let socket = Socket(adopting: fd)
        try? socket.setNoDelay()
        let status = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if status != 0, errno != EINPROGRESS {
            let failure = SocketError.connectFailed(address: address.description, errno: errno)
            socket.close()
            reactor.schedule(after: .zero) { completion(.failure(failure)) }
            return
        }
        // Connected or in progress: either way the socket reports writable once it is settled.
        let attempt = ConnectAttempt(socket: socket, address: address, reactor: reactor, completion: completion)
        do {
            try reactor.register(fd, interest: .writable, handler: attempt)
        } catch {
            socket.close()
            reactor.schedule(after: .zero) { completion(.failure(error)) }
            return
        }
        attempt.armTimeout(timeout)
    }
}

/// Waits for one non-blocking connect to settle, then hands the socket over and forgets it.
private final class ConnectAttempt: ReactorHandler {
    private let socket: Socket
    private let address: SocketAddress
    private let reactor: Reactor
    private var completion: ((Result<Socket, SocketError>) -> Void)?
    private var timer: TimerID?

    init(socket: Socket, address: SocketAddress, reactor: Reactor,
         completion: @escaping (Result<Socket, SocketError>) -> Void) {
        self.socket = socket
        self.address = address
        self.reactor = reactor
        self.completion = completion
    }

    func armTimeout(_ timeout: Duration) {
        timer = reactor.schedule(after: timeout) { [self] in
            timer = nil
            finish(.failure(.connectTimedOut(address: address.description, timeout: timeout)), close: true)
        }
    }

    func onReadable() { settle() }
    func onWritable() { settle() }
    func onHangup() { settle() }

    func onReactorStop() {
        finish(.failure(.reactorStopped), close: true)
    }

    private func settle() {
        let code = socket.pendingError()
        if code == 0 {
            finish(.success(socket), close: false)
        } else {
            finish(.failure(.connectFailed(address: address.description, errno: code)), close: true)
        }
    }

    private func finish(_ result: Result<Socket, SocketError>, close: Bool) {
        guard let completion else { return }
        self.completion = nil
        if let timer { reactor.cancel(timer) }
        timer = nil
        reactor.deregister(socket.fd)
        if close { socket.close() }
        completion(result)
    }
}
