import CampaignTestSupport
import Foundation
import MockAPNs
import Synchronization
import Testing
@testable import Pipeline

/// The run recorder against the real mock server: what it hands its consumers second by second
/// adds up to the run's totals and to what the result log holds.
@Suite struct RunRecorderTests {
    @Test func secondsAddUpToTheTotalsAndTheResultLog() throws {
        var configuration = MockAPNsConfiguration()
        configuration.latencyMilliseconds = 150
        configuration.tooManyRequestsRate = 0.05
        configuration.maxStreams = 100
        configuration.initialMaxStreams = 100
        let mocks = try MockEndpoints([configuration, configuration])
        let seconds = Mutex<[RunRecorder.Second]>([])
        let finals = Mutex<[RunRecorder.Totals]>([])
        let rows = 3000
        let run = try InProcessCampaign.run(rows: rows, mocks: mocks, configure: {
            $0.retryBaseMilliseconds = 10
            $0.maxAttempts = 8
        },
                                            beforeRun: { campaign in
            campaign.recorder.onSecond { second, totals in
                seconds.withLock { $0.append(second) }
                if totals.exitStatus != nil { finals.withLock { $0.append(totals) } }
            }
        })
        let all = seconds.withLock { $0 }
        let final = try #require(finals.withLock { $0.first })
        #expect(finals.withLock { $0.count } == 1, "the last call comes once")
        #expect(all.count >= 2, "a run of over a second has more than one second")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.index < $1.index })
        var outcomes = OutcomeCounts()
        var requests = 0, retries = 0, tooMany = 0, latencies = 0
        for second in all {
            outcomes.add(second.outcomes)
            requests += second.events.requests
            retries += second.events.retries
            tooMany += second.events.tooManyRequests
            latencies += second.latency.count
        }
        let summary = run.result.summary
        #expect(outcomes == summary.counts && final.outcomes == summary.counts)
        #expect(final.exitStatus == run.result.exitStatus)
        #expect(final.recorded == rows && final.rows == rows)
        // Every attempt is a request (no stream was refused here); every 429 was retried, unless
        // it was the row's last attempt.
        let attempts = run.records.reduce(0) { $0 + $1.attempts }
        #expect(requests == attempts && final.events.requests == attempts)
        #expect(retries == attempts - rows && retries > 0)
        #expect(tooMany == retries + summary.counts[.gaveUp], "429s \(tooMany), attempts \(attempts)")
        #expect(latencies == summary.latency.count && final.latency.count == summary.latency.count)
        // The mock answers after 150 ms: nothing in the buckets up to 0.1 s.
        let upTo100ms = try #require(LatencyBuckets.upperBoundsSeconds.firstIndex(of: 0.1))
        #expect(final.latency.cumulative[upTo100ms] == 0 && final.latency.count > 0)
        #expect(final.events.connectionsOpened >= 2 && final.lastSuccessAtUnix != nil)
    }

    @Test func everyLatencyLandsInTheBucketItsBoundsSay() {
        let bounds = LatencyBuckets.upperBoundsMicroseconds.map { Double($0) }
        func expected(_ value: Double) -> Int { bounds.firstIndex { value <= $0 } ?? bounds.count }
        var values: [Double] = [0, 2e7]
        for bound in bounds { values += [bound, bound + 0.5, bound - 0.5] }
        var value = 1.0
        while value < 2e7 {
            values.append(value)
            value *= 1.07
        }
        for value in values { #expect(LatencyBuckets.bucket(microseconds: value) == expected(value), "\(value) µs") }
        var buckets = LatencyBuckets()
        for milliseconds in [0.05, 0.3, 7, 7, 30_000] { buckets.record(milliseconds: milliseconds) }
        #expect(buckets.count == 5 && buckets.counts.last == 1)
        #expect(buckets.cumulative == [1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4])
        #expect(abs(buckets.sumSeconds - 30.01435) < 1e-9)
    }
}
