import Testing
@testable import Transport

/// What the connections of one run told their delegate, copied out of the reactor thread at the end.
struct ConnectionRunReport: Sendable {
    /// Tag → how many responses it got (each must be 1 when the run completes).
    var responsesPerTag: [UInt64: Int] = [:]
    var statuses: [Int: Int] = [:]
    var firstResponse: H2Response?
    var notProcessed: [(tag: UInt64, cause: H2NotProcessedCause)] = []
    var lost: [(tag: UInt64, cause: H2LossCause)] = []
    var goaways: [H2GoAway] = []
    var closeErrors: [ClientConnectionError?] = []
    /// Delegate calls a connection made after its didCloseWith (must stay 0).
    var callsAfterClose = 0
    var submissions = 0
    /// Tag events (response, not processed, lost) in arrival order, by kind: "response", "goaway", ...
    var eventKinds: [String] = []
    var slotsAtReady: [Int] = []
    var maxInFlight = 0
    /// The most requests in flight at once before the first response other than 403.
    var maxInFlightBeforeAuthorized = 0
    var stateAfterGoaway: ClientConnectionState?
    var freeSlotsAfterGoaway: Int?
    var elapsedSeconds = 0.0
    /// `ClientConnection.peer` of the (last) connection that closed.
    var peerName = ""

    var responseCount = 0
    /// Tag → the status of its (last) response.
    var statusByTag: [UInt64: Int] = [:]
    /// Tag → the body of its response, when not empty.
    var bodyByTag: [UInt64: String] = [:]
    var endings: Int { responseCount + notProcessed.count + lost.count }
}

/// Feeds tags 1...total to its connections as slots open (the pull model), optionally resending what
/// was not processed, and closes them gracefully once every tag has its response.
final class ConnectionTestDriver: ClientConnectionDelegate {
    private var queue: [UInt64]
    private let total: Int
    private let resendNotProcessed: Bool
    private let closeWhenDone: Bool
    private let done: TransportAwaited<ConnectionRunReport>
    private var report = ConnectionRunReport()
    private var closed: Set<ObjectIdentifier> = []
    private var connections: [ClientConnection] = []
    private var authorized = false
    private let startedAt = Reactor.monotonicNanoseconds()
    private let body = Array(#"{"aps":{"alert":"hello"}}"#.utf8)
    private let headers = [
        H2Header("authorization", "bearer test-provider-token"),
        H2Header("apns-push-type", "alert"),
        H2Header("apns-topic", "com.example.app"),
        H2Header("apns-expiration", "0"),
    ]

    init(total: Int, resendNotProcessed: Bool, closeWhenDone: Bool, done: TransportAwaited<ConnectionRunReport>) {
        self.total = total
        queue = (1...UInt64(max(total, 1))).reversed().map { $0 }
        if total == 0 { queue = [] }
        self.resendNotProcessed = resendNotProcessed
        self.closeWhenDone = closeWhenDone
        self.done = done
    }

    func add(_ connection: ClientConnection) {
        connections.append(connection)
    }

    private func fill(_ connection: ClientConnection) {
        while connection.freeStreamSlots > 0, let tag = queue.popLast() {
            // The device token carries the tag, so a server can answer by it.
            let hex = String(tag, radix: 16)
            let path = "/3/device/" + String(repeating: "0", count: 64 - hex.count) + hex
            guard connection.submit(path: path, headers: headers, body: body, tag: tag,
                                    submittedAt: Reactor.monotonicNanoseconds()) else {
                queue.append(tag)
                break
            }
            report.submissions += 1
            report.maxInFlight = max(report.maxInFlight, connection.inFlightCount)
            if !authorized {
                report.maxInFlightBeforeAuthorized = max(report.maxInFlightBeforeAuthorized, connection.inFlightCount)
            }
        }
    }

    private func checkOpen(_ connection: ClientConnection) {
        if closed.contains(ObjectIdentifier(connection)) { report.callsAfterClose += 1 }
    }

    func connectionDidBecomeReady(_ connection: ClientConnection) {
        checkOpen(connection)
        report.slotsAtReady.append(connection.freeStreamSlots)
        fill(connection)
    }

    func connectionHasFreeSlots(_ connection: ClientConnection) {
        checkOpen(connection)
        fill(connection)
    }

    func connection(_ connection: ClientConnection, didReceive response: H2Response) {
        checkOpen(connection)
        report.eventKinds.append("response")
        report.responsesPerTag[response.tag, default: 0] += 1
        report.responseCount += 1
        report.statusByTag[response.tag] = response.status
        if !response.body.isEmpty { report.bodyByTag[response.tag] = String(decoding: response.body, as: UTF8.self) }
        report.statuses[response.status, default: 0] += 1
        if report.firstResponse == nil { report.firstResponse = response }
        if response.status != 403 { authorized = true }
        if closeWhenDone, report.responseCount == total {
            for connection in connections { connection.close() }
        }
    }

    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        checkOpen(connection)
        report.eventKinds.append("notProcessed")
        report.notProcessed.append((tag, cause))
        if resendNotProcessed { queue.append(tag) }
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        checkOpen(connection)
        report.eventKinds.append("lost")
        report.lost.append((tag, cause))
    }

    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {
        checkOpen(connection)
        report.eventKinds.append("goaway")
        report.goaways.append(goaway)
        report.stateAfterGoaway = connection.state
        report.freeSlotsAfterGoaway = connection.freeStreamSlots
    }

    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        checkOpen(connection)
        closed.insert(ObjectIdentifier(connection))
        report.eventKinds.append("closed")
        report.closeErrors.append(error)
        report.peerName = connection.peer
        if closed.count == connections.count {
            report.elapsedSeconds = Double(Reactor.monotonicNanoseconds() - startedAt) / 1e9
            done.fulfil(report)
        }
    }
}

/// A client TLS context, a server context and its CA, for 127.0.0.1.
struct ConnectionTestTLS: Sendable {
    let authority: CertificateAuthority
    let server: TLSContext
    let client: TLSContext

    init(serverHosts: [String] = ["127.0.0.1", "localhost"]) throws {
        authority = try CertificateAuthority()
        server = try TLSContext.server(identity: authority.issueServerCertificate(hosts: serverHosts))
        client = try TLSContext.client(additionalTrust: .authority(authority))
    }
}

/// Runs `connections` ClientConnections on a reactor of their own against 127.0.0.1:`port` until
/// each has closed (or `timeout` passes: then the report is nil).
func runConnections(port: UInt16, host: String = "127.0.0.1", tls: TLSContext, connections count: Int = 1,
                    total: Int, maxStreams: Int = 100, singleStreamUntilAuthorized: Bool = false,
                    resendNotProcessed: Bool = false, closeWhenDone: Bool = true, timeout: Double = 20,
                    configure: @escaping @Sendable (inout ClientConnection.Configuration) -> Void = { _ in })
    throws -> ConnectionRunReport? {
    try withRunningReactor { reactor in
        let done = TransportAwaited<ConnectionRunReport>()
        reactor.execute {
            let driver = ConnectionTestDriver(total: total, resendNotProcessed: resendNotProcessed,
                                              closeWhenDone: closeWhenDone, done: done)
            var configuration = ClientConnection.Configuration(
                endpoint: Endpoint(host: host, port: port), address: .loopback(port: port), tls: tls,
                maxStreams: maxStreams, singleStreamUntilAuthorized: singleStreamUntilAuthorized)
            configuration.capturedHeaders = .apns
            configure(&configuration)
            let connections = (0..<count).map { _ in
                ClientConnection(reactor: reactor, configuration: configuration, delegate: driver)
            }
            connections.forEach(driver.add)
            connections.forEach { $0.start() }
        }
        return done.wait(seconds: timeout)
    }
}

/// Runs a test server on its own reactor for the duration of `body`.
func withTestServer<Result>(tls: ConnectionTestTLS, behavior: TestServerBehavior = TestServerBehavior(),
                            stats: Shared<TestServerStats> = Shared(TestServerStats()),
                            _ body: (UInt16) throws -> Result) throws -> Result {
    let reactor = try Reactor.start(name: "test-h2-server")
    defer {
        reactor.stop()
        reactor.join()
    }
    let port = try TestH2Server.start(on: reactor, context: tls.server, behavior: behavior, stats: stats)
    try #require(port != 0)
    return try body(port)
}
