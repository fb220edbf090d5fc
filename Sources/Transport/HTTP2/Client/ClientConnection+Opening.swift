import CNGHTTP2

// Opening a connection: TCP connect (Socket.connect, bounded by connectTimeout; with a proxy, the
// CONNECT tunnel of ProxyTunnel, bounded by it too), the TLS handshake
// driven here on the connection's own registration (so abort() can end it at once), then the HTTP/2
// preface and SETTINGS; the server's first SETTINGS makes the connection ready (in `settle`).
// `handshakeTimeout` bounds the handshake and the wait for SETTINGS together (the health timer,
// ClientConnection+Health.swift).

extension ClientConnection {
    func connectFinished(_ result: Result<Socket, ClientConnectionError>) {
        guard phase == .connecting else {
            // Closed while connecting: the socket is ours to drop.
            if case let .success(socket) = result { socket.close() }
            return
        }
        switch result {
        case let .failure(error):
            tearDown(error)
        case let .success(socket):
            self.socket = socket
            do throws(TLSError) {
                let tls = try TLSSession(client: configuration.tls, socket: socket, host: configuration.endpoint.host)
                self.tls = tls
                fd = socket.fd
                try register(interest: .readable)
                phase = .handshaking
                handshakeDeadline = Reactor.monotonicNanoseconds() &+ Reactor.nanoseconds(configuration.handshakeTimeout)
                armHealthTimer()
                stepHandshake()
            } catch {
                tearDown(.tls(error))
            }
        }
        settle()
    }

    private func register(interest: ReactorInterest) throws(TLSError) {
        do {
            try reactor.register(fd, interest: interest, handler: ClientConnectionHandler(self))
            isRegistered = true
        } catch {
            throw TLSError.handshakeFailed(peer: configuration.endpoint.host, detail: error.description)
        }
    }

    func stepHandshake() {
        guard phase == .handshaking, let tls else { return }
        do {
            switch try tls.handshake() {
            case .complete: beginHTTP2()
            case .wantRead: reactor.setInterest(.readable, for: fd)
            case .wantWrite: reactor.setInterest(.writable, for: fd)
            }
        } catch {
            tearDown(.tls(error))
        }
    }

    private func beginHTTP2() {
        let host = configuration.endpoint.host
        let port = configuration.endpoint.port
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let authority = port == 443 ? bracketed : "\(bracketed):\(port)"
        do {
            h2 = try H2ClientSession(configuration: .init(
                authority: authority, maxStreams: configuration.maxStreams,
                singleStreamUntilAuthorized: configuration.singleStreamUntilAuthorized,
                maxResponseBodyBytes: configuration.maxResponseBodyBytes, capturedHeaders: configuration.capturedHeaders))
        } catch {
            return tearDown(.protocolError(error))
        }
        phase = .awaitingSettings
        lastReceiveAt = Reactor.monotonicNanoseconds()
        reactor.setInterest(.readable, for: fd)
        writeOutput()
        // The server's SETTINGS may already wait inside OpenSSL, where epoll cannot see them.
        readAndReceive()
    }
}
