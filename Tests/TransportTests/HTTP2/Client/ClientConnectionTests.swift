import Glibc
import Testing
@testable import Transport

/// ClientConnection over real TLS on 127.0.0.1 against a test server built from TLSSession +
/// H2ServerSession (ClientConnectionTestServer.swift), one fault at a time.
@Suite(.serialized)
struct ClientConnectionTests {
    let tls: ConnectionTestTLS

    init() throws {
        tls = try ConnectionTestTLS()
    }

    @Test func requestsComeBackWithTheirTagStatusAndApnsID() throws {
        var behavior = TestServerBehavior()
        behavior.unregisteredEveryThirdToken = true
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 300)
        }
        let run = try #require(report, "the run did not finish")
        #expect(run.responseCount == 300)
        #expect(run.responsesPerTag.count == 300 && run.responsesPerTag.values.allSatisfy { $0 == 1 })
        #expect(run.statuses == [200: 200, 410: 100])
        let wrong = run.statusByTag.filter { tag, status in status != (tag % 3 == 0 ? 410 : 200) }
        #expect(wrong.isEmpty, "statuses delivered with the wrong tag: \(Array(wrong.prefix(5)))")
        #expect(run.bodyByTag[3] == #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        #expect(run.bodyByTag[4] == nil)
        #expect(run.firstResponse?.apnsID?.hasPrefix("00000000-0000-0000-0000-") == true)
        #expect(run.slotsAtReady == [100])
        #expect(run.closeErrors.count == 1)
        #expect(run.closeErrors.first.map { $0 == nil } == true, "graceful close: \(run.closeErrors)")
        #expect(run.eventKinds.last == "closed")
        #expect(run.callsAfterClose == 0)
    }

    @Test func tokenAuthConnectionRunsOneStreamUntilAuthorizedThenFollowsTheServersRamp() throws {
        let stats = Shared(TestServerStats())
        var behavior = TestServerBehavior()
        behavior.initialMaxStreams = 1
        behavior.raiseMaxStreamsAfterFirstSuccess = 40
        let report = try withTestServer(tls: tls, behavior: behavior, stats: stats) { port in
            try runConnections(port: port, tls: tls.client, total: 400, singleStreamUntilAuthorized: true)
        }
        let run = try #require(report)
        #expect(run.responseCount == 400)
        #expect(run.slotsAtReady == [1])
        #expect(run.maxInFlightBeforeAuthorized == 1)
        #expect(run.maxInFlight == 40)
        #expect(stats.withLock { $0.maxOpenStreams } == 40)
    }

    @Test func forbiddenResponsesKeepTheConnectionAtOneStreamAlthoughTheServerAllowsMore() throws {
        var behavior = TestServerBehavior()
        behavior.forbiddenFirst = 3
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 200, singleStreamUntilAuthorized: true)
        }
        let run = try #require(report)
        #expect(run.statuses == [403: 3, 200: 197])
        #expect(run.slotsAtReady == [1])
        #expect(run.maxInFlightBeforeAuthorized == 1)
        #expect(run.maxInFlight == 100)
    }

    @Test func goawayReturnsTheStreamsAboveItsLastStreamAsNotProcessed() throws {
        var behavior = TestServerBehavior()
        behavior.goawayAfter = 10
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 50, closeWhenDone: false)
        }
        let run = try #require(report)
        #expect(run.responseCount == 10)
        #expect(run.notProcessed.count == 40)
        #expect(run.notProcessed.allSatisfy { $0.cause == .aboveGoawayLastStream })
        #expect(Set(run.notProcessed.map(\.tag)) == Set(11...50))
        #expect(run.lost.isEmpty)
        #expect(run.goaways.map(\.debugData) == [#"{"reason":"Shutdown"}"#])
        // Draining, or closed already when the server's EOF came in the same read as its GOAWAY.
        #expect(run.stateAfterGoaway == .draining || run.stateAfterGoaway == .closed)
        #expect(run.freeSlotsAfterGoaway == 0)
        let goawayIndex = try #require(run.eventKinds.firstIndex(of: "goaway"))
        #expect(run.eventKinds.lastIndex(of: "notProcessed").map { $0 > goawayIndex } == true)
        #expect(run.eventKinds.last == "closed")
        #expect(run.closeErrors.count == 1 && run.closeErrors[0] == nil, "\(run.closeErrors)")
    }

    @Test func refusedStreamsComeBackAsNotProcessedAndAreResent() throws {
        var behavior = TestServerBehavior()
        behavior.refuseEvery = 10
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 500, resendNotProcessed: true)
        }
        let run = try #require(report)
        #expect(run.responseCount == 500)
        #expect(run.responsesPerTag.values.allSatisfy { $0 == 1 })
        #expect(!run.notProcessed.isEmpty)
        #expect(run.notProcessed.allSatisfy { $0.cause == .refusedStream })
        #expect(run.submissions == 500 + run.notProcessed.count)
        #expect(run.lost.isEmpty)
    }

    @Test func serverClosingMidRunLosesEveryRequestInFlight() throws {
        var behavior = TestServerBehavior()
        behavior.closeAfter = 5
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 60, closeWhenDone: false)
        }
        let run = try #require(report)
        #expect(run.endings == run.submissions)
        #expect(run.responseCount <= 5)
        #expect(run.lost.count >= 55 - 5 && run.lost.count == run.submissions - run.responseCount - run.notProcessed.count)
        #expect(run.lost.allSatisfy { $0.cause == .connectionLost })
        #expect(run.closeErrors.count == 1)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        guard case let .peerClosed(peer) = error else {
            Issue.record("expected peerClosed, got \(error)")
            return
        }
        #expect(peer.hasPrefix("127.0.0.1:"))
        #expect(!error.isConfigurationError)
        #expect(run.eventKinds.last == "closed")
    }

    @Test func stalledServerIsDetectedByTheHealthTimersAndItsStreamsComeBackLost() throws {
        var behavior = TestServerBehavior()
        behavior.stallAfter = 5
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 50, closeWhenDone: false) { configuration in
                configuration.pingInterval = .milliseconds(150)
                configuration.pingTimeout = .milliseconds(150)
                configuration.responseTimeout = .milliseconds(600)
            }
        }
        let run = try #require(report)
        #expect(run.responseCount == 5)
        #expect(run.lost.count == 45)
        #expect(run.lost.allSatisfy { $0.cause == .connectionLost })
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        switch error {
        case .pingTimeout, .responseTimeout: break
        default: Issue.record("expected a ping or response timeout, got \(error)")
        }
        // Clock: the run's own; slack: 5 s for timers of 150-600 ms (a missed timer would hang to the limit).
        #expect(run.elapsedSeconds < 5)
    }

    @Test func responseTimeoutFailsAConnectionWhoseOldestRequestGoesUnanswered() throws {
        var behavior = TestServerBehavior()
        behavior.stallAfter = 0
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 3, closeWhenDone: false) { configuration in
                configuration.pingInterval = .seconds(30)
                configuration.responseTimeout = .milliseconds(300)
            }
        }
        let run = try #require(report)
        #expect(run.lost.count == 3)
        #expect(run.closeErrors.first.flatMap { $0 } == .responseTimeout(peer: run.peerName, timeout: .milliseconds(300)))
        // Clock: the run's own; no slack below the 300 ms timeout (a floor), 2.7 s above for a busy scheduler.
        #expect(run.elapsedSeconds >= 0.3 && run.elapsedSeconds < 3)
    }

    @Test func silentServerFailsThePingTimeout() throws {
        var behavior = TestServerBehavior()
        behavior.stallAfter = 0
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 1, closeWhenDone: false) { configuration in
                configuration.pingInterval = .milliseconds(100)
                configuration.pingTimeout = .milliseconds(200)
                configuration.responseTimeout = .seconds(30)
            }
        }
        let run = try #require(report)
        #expect(run.lost.count == 1)
        #expect(run.closeErrors.first.flatMap { $0 } == .pingTimeout(peer: run.peerName, timeout: .milliseconds(200)))
    }

    @Test func serverFromAnotherCAIsATLSConfigurationError() throws {
        let stranger = try CertificateAuthority(commonName: "another CA")
        let client = try TLSContext.client(additionalTrust: .authority(stranger))
        let report = try withTestServer(tls: tls) { port in
            try runConnections(port: port, tls: client, total: 5)
        }
        let run = try #require(report)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        guard case .tls(.certificateVerificationFailed) = error else {
            Issue.record("expected a verification failure, got \(error)")
            return
        }
        #expect(error.isConfigurationError)
        #expect(run.submissions == 0 && run.endings == 0)
        #expect(run.slotsAtReady.isEmpty)
    }

    @Test func certificateForAnotherHostIsAHostnameMismatch() throws {
        let report = try withTestServer(tls: tls) { port in
            try runConnections(port: port, host: "api.push.apple.com", tls: tls.client, total: 5)
        }
        let run = try #require(report)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        #expect(error == .tls(.hostnameMismatch(peer: "api.push.apple.com")))
        #expect(error.isConfigurationError)
        #expect(run.submissions == 0)
    }

    @Test func aServerThatNeverSendsSettingsFailsTheHandshakeTimeout() throws {
        var behavior = TestServerBehavior()
        behavior.silentAfterHandshake = true
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, total: 3) { configuration in
                configuration.handshakeTimeout = .milliseconds(300)
            }
        }
        let run = try #require(report)
        #expect(run.closeErrors.first.flatMap { $0 } == .tls(.handshakeTimedOut(peer: "127.0.0.1", timeout: .milliseconds(300))))
        #expect(run.slotsAtReady.isEmpty && run.submissions == 0)
        #expect(run.closeErrors.first.flatMap { $0 }?.isConfigurationError == false)
    }

    @Test func aTLSServerThatDoesNotSpeakHTTP2IsAProtocolError() throws {
        let report = try withRunningReactor { reactor in
            let port = try TLSEchoServer.start(on: reactor, context: tls.server, handshakes: TransportAwaited())
            return try runConnections(port: port, tls: tls.client, total: 3)
        }
        let run = try #require(report)
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        guard case .protocolError = error else {
            Issue.record("an echoed preface should break HTTP/2, got \(error)")
            return
        }
        #expect(run.submissions == 0)
    }

    @Test func connectingToAClosedPortFailsWithAConnectError() throws {
        let listener = try Socket.listen(on: .loopback())
        let port = try listener.localAddress().port
        listener.close()
        let run = try #require(try runConnections(port: port, tls: tls.client, total: 5))
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        #expect(error == .connect(.connectFailed(address: "127.0.0.1:\(port)", errno: ECONNREFUSED)))
        #expect(!error.isConfigurationError)
        #expect(error.description.contains("127.0.0.1:\(port)"))
    }
}
