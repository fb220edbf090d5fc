import CampaignTestSupport
import Foundation
import MockAPNs
import Testing
import TestSupport
@testable import Pipeline

/// `rate` and `spreadSeconds` against real mock servers over TLS. The pace is judged on the
/// sender's own clock, exactly: every permit the pacer granted and a request used, at the instant it
/// was taken (`PacerGrants`). The mocks' record of when each request arrived (`recordOutPath`) keeps
/// a looser end-to-end check, since a loaded machine delays and bunches what the mock reads.
@Suite(.serialized) struct PacingCampaignTests {
    /// Arrival times (ms) of every request the mocks recorded, sorted; the mocks are stopped first
    /// so that their records are complete.
    private static func arrivals(_ mocks: MockEndpoints, records: [String]) throws -> [Int] {
        for server in mocks.servers { _ = try server.stop() }
        var times: [Int] = []
        for path in records {
            // A mock that got no request may leave an empty file: no frame, no record.
            guard let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 else { continue }
            let decoded = try Command.tool("zstd", ["-dc", "-q", path])
            try #require(decoded.status == 0, "\(decoded.stderr)")
            for line in decoded.stdout.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                times.append(try #require(object?["time_ms"] as? Int))
            }
        }
        return times.sorted()
    }

    /// The most requests the pacer let out inside any window of `width` ms, on its own clock.
    private static func busiest(_ grants: [PacerGrants.Grant], width: Int) -> Int {
        let widthNanoseconds = UInt64(width) * 1_000_000
        var best = 0, inWindow = 0, first = 0
        for last in grants.indices {
            inWindow += grants[last].used
            while grants[last].takenAt - grants[first].takenAt >= widthNanoseconds {
                inWindow -= grants[first].used
                first += 1
            }
            best = max(best, inWindow)
        }
        return best
    }

    /// The pacer's contract, exactly: in any window of W seconds at most rate × W + burst requests,
    /// for windows from 10 ms (a burst's worth) to a second.
    private static func expectPace(_ grants: [PacerGrants.Grant], rate: Double,
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        let burst = Pacer(rate: rate).burst
        for width in [10, 50, 100, 250, 1000] {
            let allowed = Int((rate * Double(width) / 1000).rounded(.up)) + burst
            let seen = busiest(grants, width: width)
            #expect(seen <= allowed, "\(seen) requests in some \(width) ms window, at most \(allowed)",
                    sourceLocation: sourceLocation)
        }
    }

    /// Two mocks, each recording its requests to a file in `directory`.
    private static func recordingMocks(_ directory: TemporaryDirectory,
                                       _ configure: (inout MockAPNsConfiguration) -> Void = { _ in })
        throws -> (MockEndpoints, [String]) {
        let paths = [directory.path("mock-a.jsonl.zst"), directory.path("mock-b.jsonl.zst")]
        let configurations = paths.map { path in
            var configuration = MockAPNsConfiguration()
            configuration.recordOutPath = path
            configure(&configuration)
            return configuration
        }
        return (try MockEndpoints(configurations), paths)
    }

    /// 300 rows at 200/s over four connections on two reactor threads: one pace for all of them.
    /// Clocks: the pacer's own (exact bound) and the run's (elapsed, no slack: load only slows it);
    /// the mocks' arrivals must span a second of the 1.5 s run (slack: half a second of scheduler
    /// delay on a loaded machine; unpaced, all 300 arrive within a few ms).
    @Test func aPacedCampaignSendsNoMoreThanTheRateInAnyWindow() throws {
        let directory = try TemporaryDirectory()
        let (mocks, records) = try Self.recordingMocks(directory)
        let grants = PacerGrants()
        let run = try InProcessCampaign.run(rows: 300, mocks: mocks) { configuration in
            configuration.rate = 200
            configuration.pacerGrants = grants
            configuration.connections = 4
            configuration.reactorThreads = 2
        }
        #expect(run.records.allSatisfy { $0.outcome == .delivered })
        #expect(run.result.summary.elapsedSeconds >= 1.4, "300 rows at 200/s take about 1.5 s")
        #expect(run.result.summary.rate == 200)
        #expect(run.result.summary.json.contains("\"rate_per_s\": 200.0"))
        let granted = grants.all
        #expect(granted.reduce(0) { $0 + $1.used } == 300, "every request went out on a permit")
        Self.expectPace(granted, rate: 200)
        let times = try Self.arrivals(mocks, records: records)
        #expect(times.count == 300)
        let spread = (times.last ?? 0) - (times.first ?? 0)
        #expect(spread >= 1000, "arrivals spread over \(spread) ms")
    }

    /// Every request counts, retries too: 100 rows of which 50 are answered 429 once make 150
    /// requests, which at 100/s take about 1.5 s, not the 1 s the rows alone would.
    @Test func retriesCountTowardTheRate() throws {
        let directory = try TemporaryDirectory()
        let (mocks, records) = try Self.recordingMocks(directory) { configuration in
            for row in stride(from: 2, through: 100, by: 2) {
                configuration.scripted[InProcessCampaign.token(row)] = .init(status: 429, reason: "TooManyRequests", times: 1)
            }
        }
        let grants = PacerGrants()
        let run = try InProcessCampaign.run(rows: 100, mocks: mocks) { configuration in
            configuration.rate = 100
            configuration.pacerGrants = grants
            configuration.retryBaseMilliseconds = 1
            configuration.retryMaxMilliseconds = 2
        }
        #expect(run.records.allSatisfy { $0.outcome == .delivered })
        // Each mock scripts the 429 once per token: a retry that lands on the other mock is refused
        // once more (seen under TSan: one row took 3 attempts, 151 requests). Every request counts.
        #expect(run.records.filter { $0.attempts >= 2 }.count == 50)
        let times = try Self.arrivals(mocks, records: records)
        #expect(times.count == run.records.reduce(0) { $0 + $1.attempts } && times.count >= 150)
        #expect(run.result.summary.elapsedSeconds >= 1.4, "150 requests at 100/s take about 1.5 s")
        let granted = grants.all
        #expect(granted.reduce(0) { $0 + $1.used } == times.count, "retries went out on permits too")
        Self.expectPace(granted, rate: 100)
    }

    /// `spreadSeconds` 2 over 200 rows: 100/s, and the pacer lets them out over about two seconds.
    @Test func spreadPicksTheRateFromTheRowCount() throws {
        let directory = try TemporaryDirectory()
        let (mocks, _) = try Self.recordingMocks(directory)
        let grants = PacerGrants()
        let run = try InProcessCampaign.run(rows: 200, mocks: mocks) { configuration in
            configuration.spreadSeconds = 2
            configuration.pacerGrants = grants
        }
        #expect(run.result.summary.rate == 100)
        #expect(run.result.summary.spreadSeconds == 2)
        // Clock: the run's own, a floor only (a pace is a floor; start-up and handshakes, which a
        // loaded machine stretches, are in it too). The pace itself on the pacer's clock, exactly.
        let elapsed = run.result.summary.elapsedSeconds
        #expect(elapsed >= 1.8, "took \(elapsed) s")
        let granted = grants.all
        #expect(granted.reduce(0) { $0 + $1.used } == 200)
        Self.expectPace(granted, rate: 100)
        // Clock: the pacer's; slack: 1.5 s (times the sanitizers' scale) for fills a busy reactor takes late.
        let span = Double((granted.last?.takenAt ?? 0) - (granted.first?.takenAt ?? 0)) / 1e9
        #expect(span <= 2 + TestTime.seconds(1.5), "the pacer's grants spanned \(span) s")
    }

    /// With no prescan there is no row count to spread: refused before anything is sent.
    @Test func spreadWithoutThePrescanIsRefusedBeforeSending() throws {
        let directory = try TemporaryDirectory()
        let (mocks, records) = try Self.recordingMocks(directory)
        #expect(throws: Campaign.SetupError.self) {
            _ = try InProcessCampaign.run(rows: 10, mocks: mocks) { configuration in
                configuration.spreadSeconds = 2
                configuration.prescan = false
            }
        }
        #expect(try Self.arrivals(mocks, records: records).isEmpty)
    }
}
