import Foundation
import Testing
import TestSupport

/// report.html in a real browser (Debian's Chromium, headless, no network): what it shows matches
/// summary.json, it raises no error, every chart renders, input is shown as text, and shards,
/// comparisons, lone logs and resumed campaigns make whole pages.
@Suite(.serialized) struct ReportPageBrowserTests {
    typealias Page = ReportPageFixture.Page

    private func fixture() throws -> ReportPageFixture { try ReportPageFixture.shared.get() }

    private func outcomeCounts(_ summary: [String: Any]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: CampaignRun.outcomes.map { ($0, summary[$0] as? Int ?? -1) })
    }

    @Test func everyRunBehindThePagesRecordedEachRowOnce() throws {
        for (run, rows) in try fixture().campaigns { try run.checkEveryRowExactlyOnce(rows: rows) }
    }

    @Test func pageCountsMatchSummaryJSON() throws {
        let page = try fixture().run
        #expect(page.count("id=\"rows\"", "") == nil)
        #expect(page.dom.contains("id=\"rows\" data-count=\"\(page.summary["rows"] as? Int ?? -1)\""))
        for (outcome, count) in outcomeCounts(page.summary) { #expect(page.count("data-outcome", outcome) == count, "\(outcome)") }
        #expect(page.count("data-outcome", "total") == page.summary["rows"] as? Int)
        let reasons = page.summary["by_reason"] as? [String: Int] ?? [:]
        #expect(!reasons.isEmpty)
        for (reason, count) in reasons { #expect(page.count("data-reason", reason) == count, "\(reason)") }
        #expect(page.dom.contains("data-exit-status=\"\(page.summary["exit_status"] as? Int ?? -1)\""))
    }

    @Test func pagesRaiseNoJavaScriptErrorAndScreenshotsAreNotBlank() throws {
        let fixture = try fixture()
        for page in [fixture.run, fixture.shards, fixture.compare, fixture.noSidecar, fixture.resumed] {
            for key in ["exceptions", "console_errors", "log_errors", "dialogs"] {
                #expect((page.browser[key] as? [Any])?.isEmpty == true, "\(page.path): \(key) \(page.browser[key] ?? "")")
            }
            let shot = page.browser["screenshot"] as? [String: Int] ?? [:]
            #expect((shot["colors"] ?? 0) > 40, "\(page.path): a screenshot of few colours is blank: \(shot)")
            #expect((shot["height"] ?? 0) > 1000)
            #expect(page.browser["scripts"] as? Int == 0 && page.browser["images"] as? Int == 0, "\(page.path): self-contained")
            #expect(!page.dom.contains("http://") || !page.dom.contains("src=\"http"), "no external resource")
        }
    }

    @Test func reasonNamesAreNeverBrokenMidWord() throws {
        let fixture = try fixture()
        for page in [fixture.run, fixture.shards, fixture.resumed] {
            let wrapped = page.browser["wrapped_reasons"] as? [String]
            #expect(wrapped == [], "\(page.path): broken across lines: \(wrapped ?? ["(not measured)"])")
        }
    }

    @Test func outcomesChartHasABarPerOutcomeThatOccurred() throws {
        let page = try fixture().run
        let chart = try #require(section(page.dom, "chart-outcomes"))
        let occurred = outcomeCounts(page.summary).values.filter { $0 > 0 }.count
        #expect(chart.components(separatedBy: "class=\"bar\"").count - 1 == occurred)
    }

    @Test func throughputChartDrawsSeriesAndMarksGoawaysAnd429s() throws {
        let page = try fixture().run
        let chart = try #require(section(page.dom, "chart-throughput"))
        #expect(chart.contains("class=\"series\"") || chart.contains("<circle"))
        #expect(chart.contains("GOAWAY"), "the mock sent GOAWAYs (goaway-after=900): marked on the time axis")
        #expect(chart.contains("429 answers"), "429s are marked")
        #expect(page.occurrences("data-event=\"start\"") == 1 && page.occurrences("data-event=\"end\"") == 1)
    }

    @Test func latencyPercentileChartAgreesWithSummary() throws {
        let page = try fixture().run
        #expect(section(page.dom, "chart-latency")?.contains("99.99%") == true, "HdrHistogram-style percentile axis")
        let answered = ["delivered", "unregistered", "bad_token", "failed"].reduce(0) { $0 + (page.summary[$1] as? Int ?? 0) }
        let endpoint = (page.summary["endpoints"] as? [String])?.first ?? ""
        #expect(page.count("data-latency-series", endpoint) == answered)
        let p50 = (page.summary["latency_ms"] as? [String: Any])?["p50"] as? Double ?? -1
        let row = try #require(page.dom.range(of: "data-latency-series=\"\(endpoint)\"").map { String(page.dom[$0.upperBound...].prefix(600)) })
        let cells = row.components(separatedBy: "<td class=\"n\">").dropFirst().map { Double($0.prefix { $0 != "<" }.filter { $0 != "," }) ?? -1 }
        #expect(cells.count >= 3 && abs(cells[1] - p50) <= max(0.01, p50 * 0.01), "p50 \(cells) vs \(p50)")
    }

    @Test func latencyOverTimeChartHasP50AndP99() throws {
        let chart = try #require(section(try fixture().run.dom, "chart-latency-over-time"))
        #expect(chart.contains("p50 ") && chart.contains("p99 "))
    }

    @Test func attemptsHistogramCountsEveryRowAndTheRetries() throws {
        let page = try fixture().run
        let labels = ["never sent", "1", "2", "3", "4", "5", "6 or more"]
        let counts = labels.map { page.count("data-attempts", $0) ?? -1 }
        #expect(counts.reduce(0, +) == page.summary["rows"] as? Int)
        #expect(counts[0] >= page.summary["rejected"] as? Int ?? 0, "rejected rows were never sent")
        #expect(counts[2...].reduce(0, +) > 0, "500s and 429s made rows take more than one request")
        #expect(section(page.dom, "chart-attempts") != nil)
    }

    @Test func connectionsChartShowsOpenAndOpened() throws {
        let chart = try #require(section(try fixture().run.dom, "chart-connections"))
        #expect(chart.contains("open ") && chart.contains("opened "))
    }

    @Test func deadTokensAreCountedByReasonAndNeverShown() throws {
        let fixture = try fixture()
        let page = fixture.run
        let dead = (page.summary["unregistered"] as? Int ?? 0) + (page.summary["bad_token"] as? Int ?? 0)
        #expect(dead > 0 && page.count("id", "dead-total") == dead)
        #expect(page.count("data-dead-reason", "Unregistered") == page.summary["unregistered"] as? Int)
        #expect(page.dom.contains("dead-tokens.csv"))
        for token in fixture.deadTokens.prefix(50) where token.count > 8 { #expect(!page.dom.contains(token), "a token on the page") }
    }

    @Test func hostileInputFileNameShowsAsText() throws {
        let page = try fixture().run
        #expect(page.text.contains(ReportPageFixture.hostileName))
        #expect((page.browser["title"] as? String)?.contains(ReportPageFixture.hostileName) == true)
        #expect(page.browser["images"] as? Int == 0 && (page.browser["dialogs"] as? [Any])?.isEmpty == true)
        #expect(!page.dom.contains("<img"))
    }

    @Test func threeShardsMergeIntoOneCampaignPage() throws {
        let fixture = try fixture()
        let page = fixture.shards
        #expect(page.occurrences("data-shard-log=") == 3)
        for outcome in CampaignRun.outcomes {
            let sum = fixture.shardSummaries.reduce(0) { $0 + ($1[outcome] as? Int ?? 0) }
            #expect(page.count("data-outcome", outcome) == sum, "\(outcome)")
        }
        #expect(page.count("data-outcome", "total") == 3000)
        #expect(page.occurrences("data-event=\"start\"") == 3, "each shard's sidecar is on the time axis")
    }

    @Test func compareShowsBothRunsWithDeltas() throws {
        let fixture = try fixture()
        let page = fixture.compare
        #expect(section(page.dom, "chart-compare-throughput") != nil && section(page.dom, "chart-latency") != nil)
        #expect(page.dom.contains("data-metric=\"rate\""))
        let rowsB = fixture.shardSummaries[0]["rows"] as? Int ?? -1
        #expect(page.dom.contains("data-metric=\"rows\" data-a=\"3000.000\" data-b=\"\(rowsB).000\""))
        let p50 = (fixture.run.summary["latency_ms"] as? [String: Any])?["p50"] as? Double ?? -1
        let metric = try #require(page.dom.range(of: "data-metric=\"latency-p50\" data-a=\"").map { page.dom[$0.upperBound...] })
        #expect(abs((Double(metric.prefix { $0 != "\"" }) ?? -1) - p50) < 0.01)
        #expect(page.text.contains("B against A"))
        #expect(fixture.compareUsage.status == 1 && fixture.compareUsage.stderr.contains("give no other logs"))
    }

    @Test func logWithoutSidecarMarksTimeChartsNotRecorded() throws {
        let page = try fixture().noSidecar
        #expect(page.occurrences("data-not-recorded=\"true\"") == 3)
        #expect(page.text.contains("not recorded"))
        for (outcome, count) in outcomeCounts(page.summary) { #expect(page.count("data-outcome", outcome) == count, "\(outcome)") }
        #expect(section(page.dom, "chart-latency") != nil, "latency still comes from the records")
    }

    @Test func killedAndResumedCampaignPageCoversTheWholeCampaign() throws {
        let fixture = try fixture()
        let page = fixture.resumed
        for (outcome, count) in outcomeCounts(page.summary) { #expect(page.count("data-outcome", outcome) == count, "\(outcome)") }
        #expect(page.count("data-outcome", "total") == 3000)
        #expect(page.occurrences("data-event=\"start\"") == 2, "both runs' starts are on the time axis")
        #expect(page.text.contains("a resumed campaign"))
        // The page starts with the first run, before the resumed run's own start.
        let started = try #require(page.text.range(of: "Started (UTC)").map { String(page.text[$0.upperBound...].prefix(30)) })
        let first = started.trimmingCharacters(in: .whitespaces).prefix(23)
        #expect(!fixture.resumedRunStartedAt.isEmpty && String(first) < fixture.resumedRunStartedAt, "\(first) vs \(fixture.resumedRunStartedAt)")
    }

    @Test func aDryRunWritesAPageThatSaysNothingWasSent() throws {
        let scratch = try TemporaryDirectory()
        let csv = scratch.path("campaign.csv"), out = scratch.path("dry")
        #expect(try Binary.run(["gen", "--rows", "200", "--out", csv, "--invalid-rate", "0.05", "--seed", "3"]).status == 0)
        let result = try Binary.run(["send", "--dry-run", "--input", csv, "--topic", MockServerProcess.topic, "--endpoint", "mock",
                                     "--out", out, "--progress", "never"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try CampaignRun(result: result, outDirectory: out).summary
        let page = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        #expect(page.contains("id=\"would-send\" data-count=\"\(summary["would_send"] as? Int ?? -1)\""))
        #expect(page.contains("data-outcome=\"rejected\" data-count=\"\(summary["rejected"] as? Int ?? -1)\""))
        #expect(page.components(separatedBy: "This was a dry run").count - 1 == 3, "each time chart says why it is empty")
    }

    /// The SVG element with `id`, as text.
    private func section(_ dom: String, _ id: String) -> String? {
        guard let start = dom.range(of: "<svg id=\"\(id)\"") else { return nil }
        guard let end = dom[start.upperBound...].range(of: "</svg>") else { return nil }
        return String(dom[start.lowerBound..<end.upperBound])
    }
}
