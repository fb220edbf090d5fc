extension TLSSession {
    /// Drives the handshake on `reactor`, bounded by `timeout`.
    ///
    /// Reactor thread only. Registers `socket.fd` for the duration and deregisters it before
    /// `completion` runs (later, on the reactor thread, exactly once), so the caller then registers
    /// the socket with its own handler. On failure the session is already closed.
    public func startHandshake(on reactor: Reactor, timeout: Duration,
                               completion: @escaping (Result<Void, TLSError>) -> Void) {
        let driver = HandshakeDriver(session: self, reactor: reactor, completion: completion)
        do {
            try reactor.register(socket.fd, interest: .readable, handler: driver)
        } catch {
            close()
            let failure = TLSError.handshakeFailed(peer: peer, detail: error.description)
            reactor.schedule(after: .zero) { completion(.failure(failure)) }
            return
        }
        driver.begin(timeout: timeout)
    }
}

/// Steps one handshake as the socket becomes ready, then hands the session back.
private final class HandshakeDriver: ReactorHandler {
    private let session: TLSSession
    private let reactor: Reactor
    private let fd: Int32
    private var completion: ((Result<Void, TLSError>) -> Void)?
    private var timer: TimerID?

    init(session: TLSSession, reactor: Reactor, completion: @escaping (Result<Void, TLSError>) -> Void) {
        self.session = session
        self.reactor = reactor
        fd = session.socket.fd
        self.completion = completion
    }

    func begin(timeout: Duration) {
        timer = reactor.schedule(after: timeout) { [self] in
            timer = nil
            finish(.failure(.handshakeTimedOut(peer: session.peer, timeout: timeout)))
        }
        reactor.schedule(after: .zero) { [self] in step() }
    }

    func onReadable() { step() }
    func onWritable() { step() }
    func onHangup() { step() }

    func onReactorStop() {
        finish(.failure(.handshakeFailed(peer: session.peer, detail: "the transport stopped")))
    }

    private func step() {
        guard completion != nil else { return }
        do {
            switch try session.handshake() {
            case .complete: finish(.success(()))
            case .wantRead: reactor.setInterest(.readable, for: fd)
            case .wantWrite: reactor.setInterest(.writable, for: fd)
            }
        } catch {
            finish(.failure(error))
        }
    }

    private func finish(_ result: Result<Void, TLSError>) {
        guard let completion else { return }
        self.completion = nil
        if let timer { reactor.cancel(timer) }
        timer = nil
        reactor.deregister(fd)
        if case .failure = result { session.close() }
        completion(result)
    }
}
