@testable import Transport

/// How the test server misbehaves, counted per connection in request arrival order (1-based).
struct TestServerBehavior: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS announced at start.
    var initialMaxStreams = 100
    /// Announced after the first 200 (APNs' ramp for a token-auth connection).
    var raiseMaxStreamsAfterFirstSuccess: Int?
    /// The first n requests get 403 InvalidProviderToken.
    var forbiddenFirst = 0
    /// Request n is answered, then GOAWAY(last-stream-id = its stream, {"reason":"Shutdown"}); later ones never are.
    var goawayAfter: Int?
    /// After n requests are answered, the next one makes the server close the connection.
    var closeAfter: Int?
    /// After n requests are answered, the server stops reading and answering (the socket stays open).
    var stallAfter: Int?
    /// Every n-th stream is refused with RST_STREAM(REFUSED_STREAM) before its headers are read.
    var refuseEvery: Int?
    /// A device token (read as a hex number) divisible by 3 gets 410 Unregistered, so a client can
    /// check that each status reaches the request it answers.
    var unregisteredEveryThirdToken = false
    /// Completes the TLS handshake, then neither reads nor writes (no SETTINGS ever).
    var silentAfterHandshake = false
}

/// A test-only HTTP/2 server built from TLSSession + H2ServerSession on a Reactor: the server side
/// for ClientConnection tests (the product's MockAPNs lives on another branch).
final class TestH2Server: ReactorHandler {
    private let listener: Socket
    private let reactor: Reactor
    private let context: TLSContext
    private let behavior: TestServerBehavior
    private let stats: Shared<TestServerStats>
    private var connections: [Int32: TestH2ServerConnection] = [:]

    /// Starts listening on 127.0.0.1 on `reactor`'s thread; returns the port.
    static func start(on reactor: Reactor, context: TLSContext, behavior: TestServerBehavior,
                      stats: Shared<TestServerStats> = Shared(TestServerStats())) throws -> UInt16 {
        let port = TransportAwaited<Result<UInt16, SocketError>>()
        reactor.execute {
            do throws(SocketError) {
                let listener = try Socket.listen(on: .loopback())
                let server = TestH2Server(listener: listener, reactor: reactor, context: context,
                                          behavior: behavior, stats: stats)
                try reactor.register(listener.fd, interest: .readable, handler: server)
                port.fulfil(.success(try listener.localAddress().port))
            } catch {
                port.fulfil(.failure(error))
            }
        }
        return try port.wait().map { try $0.get() } ?? 0
    }

    private init(listener: Socket, reactor: Reactor, context: TLSContext, behavior: TestServerBehavior,
                 stats: Shared<TestServerStats>) {
        self.listener = listener
        self.reactor = reactor
        self.context = context
        self.behavior = behavior
        self.stats = stats
    }

    func onReadable() {
        while let socket = try? listener.accept() {
            guard let tls = try? TLSSession(server: context, socket: socket, peer: "test client") else { continue }
            tls.startHandshake(on: reactor, timeout: .seconds(5)) { [self] result in
                guard case .success = result,
                      let connection = try? TestH2ServerConnection(tls: tls, reactor: reactor, behavior: behavior,
                                                                   stats: stats, onClose: { [weak self] fd in
                                                                       self?.connections[fd] = nil
                                                                   }) else { return }
                let fd = tls.socket.fd
                connections[fd] = connection
                if behavior.silentAfterHandshake {
                    try? reactor.register(fd, interest: [], handler: connection)
                    return
                }
                try? reactor.register(fd, interest: .readable, handler: connection)
                connection.write()
            }
        }
    }

    func onWritable() {}
    func onHangup() {}

    func onReactorStop() {
        reactor.deregister(listener.fd)
        listener.close()
    }
}

struct TestServerStats: Sendable {
    var connections = 0
    var requests = 0
    var maxOpenStreams = 0
    var priorityFrames = 0
}

/// One server connection: answers, refuses, goes away, closes or stalls as its behavior says.
final class TestH2ServerConnection: ReactorHandler {
    private let tls: TLSSession
    private let h2: H2ServerSession
    private let reactor: Reactor
    private let behavior: TestServerBehavior
    private let stats: Shared<TestServerStats>
    private let onClose: (Int32) -> Void
    private let fd: Int32
    private var requestCount = 0
    private var answeredOK = false
    private var stalled = false
    private var closed = false

    init(tls: TLSSession, reactor: Reactor, behavior: TestServerBehavior, stats: Shared<TestServerStats>,
         onClose: @escaping (Int32) -> Void) throws {
        self.tls = tls
        self.reactor = reactor
        self.behavior = behavior
        self.stats = stats
        self.onClose = onClose
        fd = tls.socket.fd
        h2 = try H2ServerSession(configuration: .init(maxConcurrentStreams: behavior.initialMaxStreams))
        if let every = behavior.refuseEvery {
            h2.admitsStream = { streamID in (streamID + 1) / 2 % Int32(every) != 0 }
        }
        stats.withLock { $0.connections += 1 }
    }

    func onReadable() {
        guard !stalled, !closed else { return }
        do {
            let status = try tls.readAvailable { bytes in try h2.receive(bytes) }
            h2.drainEvents { handle($0) }
            guard !closed else { return }
            write()
            if status == .closed || h2.isFinished { close() }
        } catch {
            close()
        }
    }

    private func handle(_ event: H2ServerEvent) {
        guard case let .request(request) = event, !stalled, !closed else { return }
        requestCount += 1
        let ordinal = requestCount
        stats.withLock {
            $0.requests += 1
            $0.maxOpenStreams = max($0.maxOpenStreams, h2.maxConcurrentStreamsSeen)
            $0.priorityFrames = h2.priorityFramesReceived
        }
        if let stallAfter = behavior.stallAfter, ordinal > stallAfter {
            write()
            stalled = true
            reactor.setInterest([], for: fd)
            return
        }
        if let closeAfter = behavior.closeAfter, ordinal > closeAfter {
            write()
            close()
            return
        }
        if let goawayAfter = behavior.goawayAfter, ordinal > goawayAfter { return }
        if behavior.unregisteredEveryThirdToken, let token = UInt64(request.path.suffix(16), radix: 16), token % 3 == 0 {
            _ = try? h2.respond(streamID: request.streamID, status: 410, headers: [H2Header("apns-id", apnsID(ordinal))],
                                body: Array(#"{"reason":"Unregistered","timestamp":1700000000000}"#.utf8))
        } else if ordinal <= behavior.forbiddenFirst {
            _ = try? h2.respond(streamID: request.streamID, status: 403, headers: [H2Header("apns-id", apnsID(ordinal))],
                                body: Array(#"{"reason":"InvalidProviderToken"}"#.utf8))
        } else {
            _ = try? h2.respond(streamID: request.streamID, status: 200, headers: [H2Header("apns-id", apnsID(ordinal))])
            if !answeredOK, let raised = behavior.raiseMaxStreamsAfterFirstSuccess {
                try? h2.updateMaxConcurrentStreams(raised)
            }
            answeredOK = true
        }
        if ordinal == behavior.goawayAfter {
            try? h2.goaway(lastStreamID: request.streamID, debugData: #"{"reason":"Shutdown"}"#)
        }
    }

    private func apnsID(_ ordinal: Int) -> String {
        let hex = String(ordinal, radix: 16)
        return "00000000-0000-0000-0000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    func write() {
        guard !closed else { return }
        do {
            _ = try tls.appendOutput { (buffer: inout [UInt8]) throws(H2Error) in
                try h2.drainOutput(into: &buffer)
            }
            try tls.flush()
            if !stalled {
                reactor.setInterest(tls.wantsWritable ? [.readable, .writable] : .readable, for: fd)
            }
        } catch {
            close()
        }
    }

    func onWritable() { write() }
    func onHangup() { close() }
    func onReactorStop() { close() }

    private func close() {
        guard !closed else { return }
        closed = true
        reactor.deregister(fd)
        tls.close()
        onClose(fd)
    }
}
