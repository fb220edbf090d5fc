import Foundation
import Testing
import TestSupport
@testable import Pipeline
@testable import Report

/// The page and its data, without a browser: bins keep every count, a ten-hour campaign's page
/// stays small and quick to write, values from input are escaped, estimates stay in their bucket.
@Suite struct ReportPageTests {
    /// `seconds` seconds of a source from `start`, counts varying by second.
    private func source(start: Double, seconds: Int, seed: Int) -> [TimelineLine] {
        var lines: [TimelineLine] = [.event(TimelineEvent(time: start, kind: "start", detail: "source \(seed)"))]
        for index in 1...seconds {
            var second = TimelineSecond(time: start + Double(index), seconds: 1)
            second.outcomes[.delivered] = (index * 7 + seed) % 1000
            second.outcomes[.failed] = index % 13 == 0 ? seed : 0
            second.retries = index % 5
            second.goaways = index % 997 == 0 ? 1 : 0
            second.connectionsOpen = 4
            for _ in 0..<(index % 4) { second.latency.record(milliseconds: Double(index % 300) + 0.5) }
            lines.append(.second(second))
        }
        return lines + [.event(TimelineEvent(time: start + Double(seconds), kind: "end", detail: "0"))]
    }

    private func totals(_ lines: [TimelineSecond?]) -> (delivered: Int, failed: Int, retries: Int, latencies: Int) {
        lines.compactMap { $0 }.reduce((0, 0, 0, 0)) {
            ($0.0 + $1.outcomes[.delivered], $0.1 + $1.outcomes[.failed], $0.2 + $1.retries, $0.3 + $1.latency.count)
        }
    }

    @Test func binsKeepEveryCountOfEveryShard() {
        let sources = [source(start: 1_000_000, seconds: 1000, seed: 1), source(start: 1_000_030, seconds: 900, seed: 2),
                       source(start: 1_000_100, seconds: 1000, seed: 3)]
        let bins = TimelineBins(sources: sources, maxBins: 100)
        #expect(bins.bins.count <= 100 && bins.width == 11)
        let expected = totals(sources.joined().compactMap { if case .second(let s) = $0 { s } else { nil } })
        let binned = totals(bins.bins)
        #expect(binned == expected)
        #expect(bins.events.count == 6)
        // Gauges: each source's last value in the bin, added: three sources overlap in the middle.
        #expect(bins.bins.compactMap { $0?.connectionsOpen }.max() == 12)
    }

    @Test func aTenHourCampaignPageStaysUnderOneMebibyteAndIsQuickToWrite() {
        let sources = [source(start: 1_800_000_000, seconds: 36_000, seed: 5)]
        var summary = Summary(rows: 10_000_000)
        summary.counts[.delivered] = 10_000_000
        summary.detail.attempts[1] = 10_000_000
        for index in 0..<5000 { summary.latency.record(milliseconds: Double(index % 700) + 1) }
        let run = ReportRun(logPath: "out/results.jsonl.zst", summary: summary, header: nil, timeline: sources[0],
                            deadTokensPath: nil)
        var page = ""
        let cpu = TestTime.threadCPUSeconds { page = ReportPage.render(ReportCampaign(runs: [run])) }
        #expect(page.utf8.count <= 1 << 20, "\(page.utf8.count) bytes")
        #expect(page.contains("One point per 60 s"))
        // A 1M-row run takes seconds; its page must cost under 1 % of that (this is 10 hours' worth).
        // Clock: this thread's CPU time (wall time under load counts the wait for a core, 2.95 s at load 20);
        // slack: 2 s in a debug build, scaled for sanitizers.
        #expect(cpu < TestTime.seconds(2), "\(cpu) s of CPU")
    }

    @Test func valuesFromInputAreEscaped() {
        var summary = Summary(rows: 1)
        summary.counts[.failed] = 1
        summary.byReason["<script>alert(1)</script>"] = 1
        summary.detail.recordLatency(milliseconds: 3, endpoint: "\"><svg onload=alert(2)>")
        summary.latency.record(milliseconds: 3)
        var header = ReportHeader()
        header.input = "<img src=x onerror=alert(1)>.csv"
        header.endpoints = ["a&b<c>:443"]
        let page = ReportPage.render(ReportCampaign(runs: [ReportRun(logPath: "<log>", summary: summary, header: header,
                                                                     timeline: nil, deadTokensPath: "'dead'.csv")]))
        for raw in ["<script", "<img", "<svg onload", "a&b", "<log>", "'dead'"] { #expect(!page.contains(raw), "\(raw)") }
        #expect(page.contains("&lt;img src=x onerror=alert(1)&gt;.csv") && page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(page.contains("data-not-recorded=\"true\""))
        #expect(!page.contains("http://") || !page.contains("src=\"http"))
    }

    @Test func deadTokensAreCountedByReasonAndEnvironmentAcrossShardsWhenRecordsNameTheirEnvironment() {
        func shard(_ records: [(Outcome, String, String?)]) -> ReportRun {
            var summary = Summary(rows: records.count)
            for (index, (outcome, reason, environment)) in records.enumerated() {
                var record = ResultRecord(row: index + 1, deviceToken: String(repeating: "ab", count: 32), outcome: outcome,
                                          status: outcome == .unregistered ? 410 : 400, reason: reason, attempts: 1)
                (record.environment, record.keyID) = (environment, environment == nil ? nil : "ABCDE12345")
                summary.add(record)
            }
            return ReportRun(logPath: "shard.jsonl.zst", summary: summary, header: nil, timeline: nil, deadTokensPath: nil)
        }
        let first = shard([(.badToken, "BadDeviceToken", "sandbox"), (.badToken, "BadDeviceToken", "production"),
                           (.unregistered, "Unregistered", "production"), (.delivered, "", "sandbox")])
        let second = shard([(.badToken, "BadDeviceToken", "sandbox"), (.unregistered, "Unregistered", "production")])
        let page = ReportPage.render(ReportCampaign(runs: [first, second]))
        for (key, count) in ["BadDeviceToken sandbox": 2, "BadDeviceToken production": 1, "Unregistered production": 2] {
            #expect(page.contains("data-dead-by-environment=\"\(key)\" data-count=\"\(count)\""), "\(key)")
        }
        #expect(page.components(separatedBy: "data-dead-by-environment=").count - 1 == 3)
        // A run whose records name no environment (one credential) shows no such table.
        let plain = ReportPage.render(ReportCampaign(runs: [shard([(.badToken, "BadDeviceToken", nil)])]))
        #expect(!plain.contains("data-dead-by-environment") && plain.contains("data-dead-reason=\"BadDeviceToken\""))
    }

    @Test func onePassPercentilesAgreeWithTheHistogramsOwn() {
        var histogram = LatencyHistogram()
        var state: UInt64 = 12345
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            histogram.record(milliseconds: Double(state >> 40) / 1000 + 0.2)
        }
        let percentiles = stride(from: 0.0, through: 4.0, by: 0.05).map(ReportPage.percentile(atX:)) + [99.999, 100]
        let onePass = histogram.milliseconds(atPercentiles: percentiles)
        for (percentile, value) in zip(percentiles, onePass) where percentile > 0 {
            #expect(value == histogram.milliseconds(atPercentile: percentile), "p\(percentile)")
        }
    }

    @Test func aPercentileEstimateFallsInsideItsBucket() {
        var buckets = LatencyBuckets()
        for _ in 0..<90 { buckets.record(milliseconds: 3) }
        for _ in 0..<10 { buckets.record(milliseconds: 300) }
        let p50 = buckets.estimatedMilliseconds(atPercentile: 50) ?? 0
        let p99 = buckets.estimatedMilliseconds(atPercentile: 99) ?? 0
        #expect(p50 > 2.5 && p50 <= 5)
        #expect(p99 > 250 && p99 <= 500)
        #expect(LatencyBuckets().estimatedMilliseconds(atPercentile: 50) == nil)
    }
}
