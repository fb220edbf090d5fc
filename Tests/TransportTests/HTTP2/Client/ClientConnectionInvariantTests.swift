import Testing
@testable import Transport

/// Many requests through several connections with faults on: every tag is accounted for exactly once.
@Suite(.serialized)
struct ClientConnectionInvariantTests {
    @Test func twentyThousandRequestsOverTwoConnectionsEachEndExactlyOnce() throws {
        let tls = try ConnectionTestTLS()
        var behavior = TestServerBehavior()
        behavior.refuseEvery = 97
        let stats = Shared(TestServerStats())
        let report = try withTestServer(tls: tls, behavior: behavior, stats: stats) { port in
            try runConnections(port: port, tls: tls.client, connections: 2, total: 20_000, maxStreams: 100,
                               resendNotProcessed: true, timeout: 60)
        }
        let run = try #require(report, "the run did not finish")
        #expect(run.responsesPerTag.count == 20_000)
        #expect(run.responsesPerTag.values.allSatisfy { $0 == 1 })
        #expect(Set(run.responsesPerTag.keys) == Set(1...20_000))
        #expect(run.submissions == run.endings, "every submission ends in exactly one event")
        #expect(run.lost.isEmpty)
        #expect(!run.notProcessed.isEmpty && run.notProcessed.allSatisfy { $0.cause == .refusedStream })
        #expect(run.closeErrors.count == 2 && run.closeErrors.allSatisfy { $0 == nil })
        #expect(run.callsAfterClose == 0)
        #expect(stats.withLock { $0.connections } == 2)
        #expect(stats.withLock { $0.maxOpenStreams } <= 100)
        #expect(stats.withLock { $0.priorityFrames } == 0)
        print("ClientConnection vs test server: \(run.submissions) submissions in \(run.elapsedSeconds) s, "
              + "\(Int(Double(run.responseCount) / run.elapsedSeconds)) responses/s (2 connections × 100 streams)")
    }

    @Test func connectionsDyingMidRunStillAccountForEveryTag() throws {
        let tls = try ConnectionTestTLS()
        var behavior = TestServerBehavior()
        behavior.closeAfter = 700
        behavior.refuseEvery = 13
        let report = try withTestServer(tls: tls, behavior: behavior) { port in
            try runConnections(port: port, tls: tls.client, connections: 3, total: 5_000, maxStreams: 100,
                               resendNotProcessed: true, closeWhenDone: false, timeout: 30)
        }
        let run = try #require(report, "the run did not finish")
        #expect(run.submissions == run.endings)
        var seen: [UInt64: Int] = run.responsesPerTag
        for (tag, _) in run.lost { seen[tag, default: 0] += 1 }
        #expect(seen.values.allSatisfy { $0 == 1 }, "a tag came back twice as response/lost")
        #expect(!run.lost.isEmpty)
        #expect(run.closeErrors.count == 3)
        #expect(run.closeErrors.allSatisfy { error in if case .peerClosed = error { true } else { false } })
    }
}
