import Dispatch
import Synchronization
import Testing
import TestSupport
import APNs
import Transport
import MockAPNs

/// Transport's ClientConnection against the MockAPNs server (real TLS on 127.0.0.1) and its faults.
/// Here rather than in TransportTests because only this target sees both modules.
@Suite(.serialized)
struct ClientConnectionMockAPNsTests {
    @Test func tokenConnectionRampsFromOneStreamToTheServersLimitAfterItsFirstAuthorizedResponse() throws {
        let run = try runAgainstMock(total: 600, maxStreams: 200, singleStreamUntilAuthorized: true) {
            $0.initialMaxStreams = 1
            $0.maxStreams = 50
        }
        #expect(run.statuses == [200: 600])
        #expect(run.slotsAtReady == [1])
        #expect(run.maxInFlightBeforeAuthorized == 1)
        #expect(run.maxInFlight == 50)
        #expect(run.closeErrors.count == 1 && run.closeErrors[0] == nil, "\(run.closeErrors)")
    }

    @Test func goawayAfterNReturnsTheUnprocessedStreamsForResending() throws {
        let run = try runAgainstMock(total: 200, closeWhenDone: false) {
            $0.initialMaxStreams = 100
            $0.maxStreams = 100
            $0.goawayAfter = 20
        }
        #expect(run.goaways.count == 1)
        #expect(run.goaways.first?.debugData == #"{"reason":"Shutdown"}"#)
        #expect(run.responses >= 20)
        #expect(run.notProcessed.count > 0)
        #expect(run.notProcessed.allSatisfy { $0.cause == .aboveGoawayLastStream })
        #expect(run.lost.isEmpty)
        #expect(run.submissions == run.endings)
        #expect(run.closeErrors.count == 1 && run.closeErrors[0] == nil, "\(run.closeErrors)")
    }

    @Test func refusedStreamsAreNotProcessedAndSucceedWhenResent() throws {
        let run = try runAgainstMock(total: 400, resend: true) {
            $0.initialMaxStreams = 100
            $0.maxStreams = 100
            $0.refuseStreamsRate = 0.2
            $0.seed = 3
        }
        #expect(run.statuses == [200: 400])
        #expect(run.notProcessed.count > 20)
        #expect(run.notProcessed.allSatisfy { $0.cause == .refusedStream })
        #expect(run.submissions == 400 + run.notProcessed.count)
    }

    @Test func aResetConnectionLosesEveryRequestInFlight() throws {
        let run = try runAgainstMock(total: 300, closeWhenDone: false) {
            $0.initialMaxStreams = 100
            $0.maxStreams = 100
            $0.resetAfter = 30
            // Answers wait, so the reset finds requests in flight.
            $0.latencyMilliseconds = 20
        }
        #expect(run.responses < 30)
        #expect(run.lost.count == run.submissions - run.responses - run.notProcessed.count)
        #expect(run.lost.count > 0, "\(run.responses) responses, \(run.notProcessed.count) not processed \(run.notProcessed.prefix(3)), \(run.closeErrors), \(run.goaways)")
        #expect(run.submissions == run.endings)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        #expect(!error.isConfigurationError)
        switch error {
        case .peerClosed, .tls(.connectionFailed): break
        default: Issue.record("a reset should read as the peer closing or a TLS connection failure, got \(error)")
        }
    }

    @Test func aStalledServerIsDetectedAndItsStreamsComeBackLost() throws {
        let run = try runAgainstMock(total: 100, closeWhenDone: false, configure: {
            $0.initialMaxStreams = 100
            $0.maxStreams = 100
            $0.stallAfter = 10
        }, connection: {
            $0.pingInterval = .milliseconds(100)
            $0.pingTimeout = .milliseconds(200)
            $0.responseTimeout = .milliseconds(700)
        })
        #expect(run.responses <= 10)
        #expect(run.lost.count == 100 - run.responses)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        switch error {
        case .pingTimeout, .responseTimeout: break
        default: Issue.record("expected a ping or response timeout, got \(error)")
        }
    }

    @Test func aClientThatDoesNotTrustTheMocksCAFailsWithAConfigurationError() throws {
        let stranger = try CertificateAuthority(commonName: "not the mock's CA")
        let run = try runAgainstMock(total: 3, trust: .authority(stranger)) { _ in }
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        #expect(error.isConfigurationError)
        #expect(run.submissions == 0)
    }
}

// MARK: Driver

struct MockRunReport: Sendable {
    var responses = 0
    var statuses: [Int: Int] = [:]
    var notProcessed: [(tag: UInt64, cause: H2NotProcessedCause)] = []
    var lost: [(tag: UInt64, cause: H2LossCause)] = []
    var goaways: [H2GoAway] = []
    var closeErrors: [ClientConnectionError?] = []
    var submissions = 0
    var slotsAtReady: [Int] = []
    var maxInFlight = 0
    var maxInFlightBeforeAuthorized = 0
    /// Each answered tag's status and body, for decoding.
    var answers: [UInt64: (status: Int, body: [UInt8])] = [:]
    var endings: Int { responses + notProcessed.count + lost.count }
}

/// Sends tags 1...total through one connection as slots open; resends what was not processed when asked.
private final class MockRunDriver: ClientConnectionDelegate {
    private var queue: [UInt64]
    private let total: Int
    private let resend: Bool
    private let closeWhenDone: Bool
    private let done: @Sendable (MockRunReport) -> Void
    private var report = MockRunReport()
    private var authorized = false
    private let headers = [H2Header("authorization", "bearer mock-accepts-any-token"),
                           H2Header("apns-push-type", "alert"), H2Header("apns-topic", "com.example.app")]
    private let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)

    init(total: Int, resend: Bool, closeWhenDone: Bool, done: @escaping @Sendable (MockRunReport) -> Void) {
        queue = (1...UInt64(total)).reversed().map { $0 }
        self.total = total
        self.resend = resend
        self.closeWhenDone = closeWhenDone
        self.done = done
    }

    private func fill(_ connection: ClientConnection) {
        while connection.freeStreamSlots > 0, let tag = queue.popLast() {
            let hex = String(tag, radix: 16)
            let path = "/3/device/" + String(repeating: "0", count: 64 - hex.count) + hex
            guard connection.submit(path: path, headers: headers, body: body, tag: tag) else {
                queue.append(tag)
                return
            }
            report.submissions += 1
            report.maxInFlight = max(report.maxInFlight, connection.inFlightCount)
            if !authorized { report.maxInFlightBeforeAuthorized = max(report.maxInFlightBeforeAuthorized, connection.inFlightCount) }
        }
    }

    func connectionDidBecomeReady(_ connection: ClientConnection) {
        report.slotsAtReady.append(connection.freeStreamSlots)
        fill(connection)
    }

    func connectionHasFreeSlots(_ connection: ClientConnection) { fill(connection) }

    func connection(_ connection: ClientConnection, didReceive response: H2Response) {
        report.responses += 1
        report.statuses[response.status, default: 0] += 1
        report.answers[response.tag] = (response.status, response.body)
        if response.status != 403 { authorized = true }
        if closeWhenDone, report.responses == total { connection.close() }
    }

    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        report.notProcessed.append((tag, cause))
        if resend { queue.append(tag) }
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        report.lost.append((tag, cause))
    }

    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {
        report.goaways.append(goaway)
    }

    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        report.closeErrors.append(error)
        done(report)
    }
}

private final class Outcome: Sendable {
    private let value = Mutex<MockRunReport?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)
    func fulfil(_ report: MockRunReport) {
        value.withLock { $0 = report }
        semaphore.signal()
    }
    func wait(seconds: Double) -> MockRunReport? {
        _ = semaphore.wait(timeout: .now() + seconds)
        return value.withLock { $0 }
    }
}

/// Starts a mock (token presence only), runs one connection through `total` requests, stops both.
func runAgainstMock(total: Int, maxStreams: Int = 100, singleStreamUntilAuthorized: Bool = true,
                            resend: Bool = false, closeWhenDone: Bool = true, trust: TLSTrust? = nil,
                            configure: (inout MockAPNsConfiguration) -> Void,
                            connection adjust: @escaping @Sendable (inout ClientConnection.Configuration) -> Void = { _ in })
    throws -> MockRunReport {
    var configuration = MockAPNsConfiguration()
    configuration.authentication = .tokenPresenceOnly
    configure(&configuration)
    let server = try MockAPNsServer.start(configuration)
    defer { _ = try? server.stop() }
    let authority = try #require(server.certificateAuthority)
    let tls = try TLSContext.client(additionalTrust: trust ?? .authority(authority))
    let port = server.port
    let reactor = try Reactor.start(name: "mock-client")
    defer {
        reactor.stop()
        reactor.join()
    }
    let outcome = Outcome()
    reactor.execute {
        let driver = MockRunDriver(total: total, resend: resend, closeWhenDone: closeWhenDone) { outcome.fulfil($0) }
        var settings = ClientConnection.Configuration(
            endpoint: Endpoint(host: "127.0.0.1", port: port), address: .loopback(port: port), tls: tls,
            maxStreams: maxStreams, singleStreamUntilAuthorized: singleStreamUntilAuthorized)
        settings.capturedHeaders = H2CapturedHeaders(text: ResponseHeaderNames.apnsID, uuid: ResponseHeaderNames.uniqueID)
        adjust(&settings)
        ClientConnection(reactor: reactor, configuration: settings, delegate: driver).start()
    }
    return try #require(outcome.wait(seconds: TestTime.seconds(20)), "the connection to the mock never closed")
}

/// One connection at the mock's full width: one stream until the first answer authorizes it, then
/// up to 500 at once, and every request answered.
@Suite(.serialized)
struct ClientConnectionMockAPNsThroughputTests {
    @Test func oneConnectionOpensUpToFiveHundredStreamsOnceAuthorized() throws {
        let run = try runAgainstMock(total: 20_000, maxStreams: 500) {
            $0.initialMaxStreams = 1
            $0.maxStreams = 500
        }
        #expect(run.statuses == [200: 20_000])
        #expect(run.maxInFlightBeforeAuthorized == 1)
        #expect(run.maxInFlight > 1 && run.maxInFlight <= 500, "at most \(run.maxInFlight) in flight")
    }
}
