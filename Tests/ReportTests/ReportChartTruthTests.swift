import CampaignTestSupport
import Foundation
import MockAPNs
import Testing
@testable import Pipeline
@testable import Report

/// The report's time charts show only numbers the run could have had: a latency estimate never
/// above the largest latency recorded, a bin of a paced run never holding more than a bin-width of
/// it (single page and `--compare`), a short run drawn with more than a few points, and count axes
/// labelled in whole numbers.
@Suite struct ReportChartTruthTests {
    /// A second (or slice) of `answered` deliveries ending at `time`, covering `seconds`, each
    /// answered in `latency` ms.
    static func slice(_ time: Double, seconds: Double, answered: Int, latency: [Double] = [], open: Int = 4) -> TimelineLine {
        var second = TimelineSecond(time: time, seconds: seconds)
        second.outcomes[.delivered] = answered
        second.connectionsOpen = open
        for value in latency { second.latency.record(milliseconds: value) }
        return .second(second)
    }

    static func run(_ timeline: [TimelineLine], latencies: [Double] = [12]) -> ReportRun {
        var summary = Summary(rows: 0)
        for case .second(let second) in timeline {
            summary.counts[.delivered] += second.outcomes[.delivered]
            summary.rows += second.outcomes[.delivered]
        }
        for value in latencies { summary.latency.record(milliseconds: value) }
        return ReportRun(logPath: "out/results.jsonl.zst", summary: summary, header: nil, timeline: timeline, deadTokensPath: nil)
    }

    /// The numbers in `section`'s chart tooltips after `label ` (e.g. "p99", "B answered/s").
    static func values(_ page: String, chart: String, label: String) throws -> [Double] {
        let start = try #require(page.range(of: "id=\"\(chart)\""))
        let svg = page[start.upperBound...].components(separatedBy: "</svg>")[0]
        return svg.components(separatedBy: "<title>").dropFirst().compactMap { title in
            guard let range = title.range(of: label + " ") else { return nil }
            return Double(title[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
    }

    @Test func aLatencyEstimateNeverExceedsTheLargestLatencyRecorded() throws {
        // 98 answers at 12 ms and 2 at 30.1 ms a second: p99 sits in the 25-50 ms bucket, whose
        // interpolation read 43 ms; the run's maximum is 30.1 ms.
        let latencies = Array(repeating: 12.0, count: 98) + [30.1, 30.1]
        let timeline = (1...5).map { Self.slice(1_800_000_000 + Double($0), seconds: 1, answered: 100, latency: latencies) }
        let page = ReportPage.render(ReportCampaign(runs: [Self.run(timeline, latencies: latencies)]))
        let p99 = try Self.values(page, chart: "chart-latency-over-time", label: "p99")
        #expect(p99.count == 5)
        #expect(p99.allSatisfy { $0 <= 30.1 }, "\(p99)")
        #expect(page.contains("never above the largest (30.1 ms)"), "the chart says what its estimate is")
        var buckets = LatencyBuckets()
        for value in latencies { buckets.record(milliseconds: value) }
        var histogram = LatencyHistogram()
        for value in latencies { histogram.record(milliseconds: value) }
        let shape = LatencyShape(histogram)
        // Along the records' own latencies: p99 is a latency a row had (30.1), p50 too (12).
        #expect(abs((buckets.estimatedMilliseconds(atPercentile: 99, shape: shape) ?? 0) - 30.1) < 0.05)
        #expect(abs((buckets.estimatedMilliseconds(atPercentile: 50, shape: shape) ?? 0) - 12) < 0.05)
        #expect((buckets.estimatedMilliseconds(atPercentile: 99) ?? 0) > 30.1, "the log interpolation alone overshoots")
    }

    /// Run B paced at 2,500/s whose seconds end 0.3 s past whole seconds from its start, and whose
    /// last, short second (0.5 s) ends in the same bin as the one before.
    static func pacedRun(start: Double) -> [TimelineLine] {
        var lines: [TimelineLine] = [.event(TimelineEvent(time: start, kind: "start", detail: ""))]
        lines += (1...9).map { Self.slice(start + 0.3 + Double($0), seconds: $0 == 1 ? 1.3 : 1, answered: $0 == 1 ? 3250 : 2500) }
        lines.append(Self.slice(start + 9.8, seconds: 0.5, answered: 1250))
        return lines
    }

    @Test func compareBinsHoldOneBinWidthOfEachRun() throws {
        let a = ReportCampaign(runs: [Self.run(Self.pacedRun(start: 1_800_000_000))])
        let b = ReportCampaign(runs: [Self.run(Self.pacedRun(start: 1_800_050_000.6))])
        let page = ReportPage.render(compare: a, b, names: ("a", "b"))
        for label in ["A answered/s", "B answered/s"] {
            let rates = try Self.values(page, chart: "chart-compare-throughput", label: label)
            #expect(!rates.isEmpty && rates.allSatisfy { $0 <= 2500 * 1.02 && $0 >= 2500 * 0.98 }, "\(label): \(rates)")
        }
    }

    @Test func aBinOfTheSinglePageHoldsOneBinWidthOfThePacedRun() throws {
        let page = ReportPage.render(ReportCampaign(runs: [Self.run(Self.pacedRun(start: 1_800_000_000.6))]))
        let rates = try Self.values(page, chart: "chart-throughput", label: "answered")
        #expect(!rates.isEmpty && rates.allSatisfy { $0 <= 2500 * 1.02 }, "\(rates)")
        let bins = TimelineBins(sources: [Self.pacedRun(start: 1_800_000_000.6)])
        let kept: Int = bins.bins.compactMap { $0?.outcomes[.delivered] }.reduce(0, +)
        let recorded = 3250 + 8 * 2500 + 1250
        #expect(kept == recorded, "every count kept")
    }

    @Test func aShortRunRecordedInQuartersIsDrawnInQuarterSecondBins() throws {
        let start = 1_800_000_000.0
        // Three seconds in quarter slices of a little more than 0.25 s (a writer's batches), 600 answers each.
        var lines: [TimelineLine] = [.event(TimelineEvent(time: start, kind: "start", detail: ""))]
        var time = start
        for index in 0..<11 {
            let length = index % 3 == 0 ? 0.27 : 0.26
            time += length
            lines.append(Self.slice(time, seconds: length, answered: Int(2400 * length)))
        }
        let bins = TimelineBins(sources: [lines])
        #expect(bins.width == 0.25 && bins.bins.count >= 11, "\(bins.width) \(bins.bins.count)")
        #expect(bins.bins.dropLast().allSatisfy { $0 != nil }, "no gaps between slices")
        let page = ReportPage.render(ReportCampaign(runs: [Self.run(lines)]))
        let rates = try Self.values(page, chart: "chart-throughput", label: "answered")
        #expect(rates.count >= 11, "\(rates)")
        #expect(rates.allSatisfy { $0 <= 2400 * 1.1 }, "\(rates)")
        #expect(page.contains("One point per 0.25 s"))
        // An older sidecar's whole seconds still make one point a second.
        let old = TimelineBins(sources: [(1...3).map { Self.slice(start + Double($0), seconds: 1, answered: 10) }])
        #expect(old.width == 1 && old.bins.count == 3)
    }

    @Test func aShortRealRunRecordsQuarterSecondsAndItsPageDrawsThem() throws {
        var configuration = MockAPNsConfiguration()
        configuration.latencyMilliseconds = 150
        configuration.maxStreams = 100
        configuration.initialMaxStreams = 100
        let mocks = try MockEndpoints([configuration])
        var lines: [TimelineSecond] = []
        var page = ""
        let run = try InProcessCampaign.runWithExporters(rows: 2000, mocks: mocks, afterRun: { out in
            lines = try #require(TimelineFile.read(path: out + "/" + TimelineFile.name)).lines.compactMap { line in
                if case .second(let second) = line { second } else { nil }
            }
            page = try String(contentsOfFile: out + "/" + ReportPageFile.name, encoding: .utf8)
        })
        var outcomes = OutcomeCounts()
        for second in lines { outcomes.add(second.outcomes) }
        #expect(outcomes == run.result.summary.counts, "every recorded row is in some slice")
        // 2,000 rows at 100 in flight and 150 ms each: about 3 s, in quarters.
        #expect(lines.count >= 8 && lines.dropLast().allSatisfy { $0.seconds < 0.5 }, "\(lines.map(\.seconds))")
        #expect(page.contains("One point per 0.25 s"))
        #expect(try Self.values(page, chart: "chart-throughput", label: "answered").count >= 8)
    }

    @Test func theConnectionsAxisIsLabelledInWholeNumbers() throws {
        let timeline = (1...5).map { Self.slice(1_800_000_000 + Double($0), seconds: 1, answered: 100, open: 4) }
        let page = ReportPage.render(ReportCampaign(runs: [Self.run(timeline)]))
        let start = try #require(page.range(of: "id=\"chart-connections\""))
        let svg = page[start.upperBound...].components(separatedBy: "</svg>")[0]
        let labels = svg.components(separatedBy: "dominant-baseline=\"middle\">").dropFirst().map { $0.prefix { $0 != "<" } }
        #expect(labels.count == 5 && labels.allSatisfy { !$0.contains(".") }, "\(labels)")
        #expect(labels.last == "4", "\(labels)")
    }

    @Test func reasonNamesAreNotBrokenMidWordByTheStyle() {
        let codeRule = ReportPage.css.components(separatedBy: "code{").dropFirst().first?.prefix { $0 != "}" } ?? ""
        #expect(!codeRule.contains("break-all"), "code{word-break:break-all} split Unregistered as Unregister/ed: \(codeRule)")
    }
}
