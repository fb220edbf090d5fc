import CampaignTestSupport
import Foundation
import MockAPNs
import Testing
@testable import Pipeline

/// The sending side of a campaign — `Worker` and its `ConnectionPool` on a reactor thread — run in
/// this process against real mock servers over TLS on 127.0.0.1: where retries go, what a lost
/// connection and a stop do to the rows on it.
@Suite(.serialized)
struct WorkerMockAPNsTests {
    /// Endpoint 0 answers every request 500 InternalServerError at once, endpoint 1 answers
    /// normally after 100 ms (so that endpoint 0 gets rows before endpoint 1 is done); the pool's
    /// fill order tries endpoint 0 first. Each row endpoint 0 took is retried on endpoint 1 and
    /// delivered there: were the retry to go back to endpoint 0, it would fail again up to
    /// `maxAttempts` and give up.
    @Test func aRetryAfter500GoesToAnotherConnection() throws {
        var failing = MockAPNsConfiguration()
        failing.failures = [MockAPNsFailureRate(status: 500, rate: 1.0)]
        var healthy = MockAPNsConfiguration()
        healthy.latencyMilliseconds = 100
        let mocks = try MockEndpoints([failing, healthy])
        let run = try InProcessCampaign.run(rows: 400, mocks: mocks) {
            $0.maxAttempts = 3
            $0.retryBaseMilliseconds = 200
            $0.retryMaxMilliseconds = 400
        }
        let second = mocks.endpoints[1].description
        #expect(mocks.servers[0].stats().byStatus[500, default: 0] > 0, "endpoint 0 took no row: nothing was retried")
        let stray = run.records.filter { $0.outcome != .delivered || $0.endpoint != second }
        #expect(stray.isEmpty, "\(stray.count) rows not delivered by endpoint 1, e.g. \(stray.first.map(\.jsonLine) ?? "")")
        #expect(run.result.exitStatus == 0)
    }

    /// Endpoint 0 resets its connection after its 20th request, with later rows in flight (each
    /// answer, on either endpoint, takes 50 ms). Those rows were maybe processed: they are sent
    /// again, marked so, and delivered by the connection that stayed up; none is lost or recorded
    /// twice.
    @Test func rowsInFlightOnALostConnectionAreSentAgain() throws {
        var resetting = MockAPNsConfiguration()
        resetting.resetAfter = 20
        resetting.latencyMilliseconds = 50
        var steady = MockAPNsConfiguration()
        steady.latencyMilliseconds = 50
        let mocks = try MockEndpoints([resetting, steady])
        let run = try InProcessCampaign.run(rows: 2_000, mocks: mocks) {
            $0.reconnectBaseMilliseconds = 5_000
        }
        let healthy = mocks.endpoints[1].description
        let resent = run.records.filter(\.retriedAfterConnectionLoss)
        #expect(!resent.isEmpty, "no row was in flight on the reset connection")
        #expect(resent.allSatisfy { $0.outcome == .delivered && $0.endpoint == healthy && $0.attempts >= 2 })
        #expect(run.records.allSatisfy { $0.outcome == .delivered })
        #expect(run.result.exitStatus == 0)
    }

    /// A stop while rows are in flight (each answer takes a second, the grace is 0.1 s): rows in
    /// flight, queued and not yet read all end `aborted` `Interrupted`, each exactly once.
    @Test func aStopMidRunEndsRowsInFlightQueuedAndUnreadAsItsCauseSays() throws {
        var slow = MockAPNsConfiguration()
        slow.latencyMilliseconds = 1_000
        let mocks = try MockEndpoints([slow])
        let run = try InProcessCampaign.run(rows: 3_000, mocks: mocks, configure: {
            $0.stopGraceSeconds = 0.1
            $0.maxStreams = 100
        }, whileRunning: { campaign in
            let deadline = ContinuousClock.now + .seconds(20)
            while mocks.servers[0].stats().requests < 20 && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            campaign.interrupt(signal: 2)
        })
        #expect(run.result.stopCause == .interrupted(signal: 2))
        #expect(run.result.exitStatus == 2)
        let unfinished = run.records.filter { $0.outcome != .delivered }
        #expect(unfinished.allSatisfy { $0.outcome == .aborted && $0.reason == "Interrupted" })
        #expect(unfinished.contains { $0.attempts == 1 }, "no row was in flight when the run stopped")
        #expect(unfinished.contains { $0.attempts == 0 }, "no row was still queued when the run stopped")
        #expect(run.records.count { $0.outcome == .delivered } < 100)
    }

    /// The result log cannot be written (it is /dev/full: every write fails with ENOSPC) while
    /// rows are still being answered: the run stops, and the rows it did not finish are `aborted`
    /// with reason `OutputError` — a full disk is not bad input.
    @Test func aResultLogThatCannotBeWrittenStopsTheRunWithOutputError() throws {
        var slow = MockAPNsConfiguration()
        slow.latencyMilliseconds = 300
        let mocks = try MockEndpoints([slow])
        let run = try InProcessCampaign.run(rows: 3_000, mocks: mocks, configure: {
            $0.maxStreams = 50
            $0.stopGraceSeconds = 0.1
        }, prepareOutput: { directory in
            try FileManager.default.createSymbolicLink(atPath: directory + "/results.jsonl.zst",
                                                       withDestinationPath: "/dev/full")
        })
        guard case .outputFailed(let detail) = run.result.stopCause else {
            Issue.record("stopped by \(String(describing: run.result.stopCause)), not by the result log")
            return
        }
        #expect(detail.contains("results.jsonl.zst"), "\(detail)")
        #expect(run.result.exitStatus == 2)
        #expect(run.result.summary.byReason["OutputError", default: 0] > 0)
        #expect(run.result.summary.byReason["InputError"] == nil)
        #expect(run.result.summary.counts[.aborted] == run.result.summary.byReason["OutputError"])
    }

    /// APNs answers one row 403 ExpiredProviderToken: the run's provider token is signed again and
    /// the row is sent again, with the new token, and delivered; nothing else changes.
    @Test func anExpiredProviderTokenIsRegeneratedAndTheRowSentAgain() throws {
        var expiring = MockAPNsConfiguration()
        expiring.scripted[InProcessCampaign.token(3)] = .init(status: 403, reason: "ExpiredProviderToken", times: 1)
        let mocks = try MockEndpoints([expiring])
        let source = try InProcessCampaign.tokenSource()
        let first = source.current
        let run = try InProcessCampaign.run(rows: 20, mocks: mocks, source: source)
        #expect(source.current != first, "the provider token was not regenerated")
        let row = try #require(run.records.first { $0.row == 3 })
        #expect(row.outcome == .delivered && row.attempts == 2)
        #expect(run.records.allSatisfy { $0.outcome == .delivered })
        #expect(run.result.exitStatus == 0)
    }
}
