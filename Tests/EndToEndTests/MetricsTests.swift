import Foundation
import Testing
import TestSupport

/// `send --metrics-out` and `--pushgateway` against the real mock server, and `broadcast
/// --metrics-out` against its embedded mock, checked with Debian's real `promtool`; the sample
/// alert rules too.
@Suite(.serialized) struct MetricsTests {
    typealias Rig = SendCampaignTests.Rig
    static let promtool = "/usr/bin/promtool"
    /// The repository: the alert rules live in jobs/prometheus/.
    static let root = SourceTree.root().path

    @Test func textfilePassesPromtoolAndItsCountsEqualTheSummary() throws {
        let rig = try Rig(rows: 2000, invalidRate: 0.02, unregisteredRate: 0.03)
        let mock = try rig.mock(["--too-many-requests", "0.02", "--goaway-after", "400"])
        let prom = rig.scratch.path("apns_bulk.prom")
        let run = try rig.send(mock, ["--metrics-out", prom, "--metrics-interval", "1"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2000)

        // promtool reads the exposition text from stdin.
        let check = try Command.run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", Self.promtool, prom])
        #expect(check.status == 0, "promtool check metrics: \(check.stdout) \(check.stderr)")
        let text = try String(contentsOfFile: prom, encoding: .utf8)
        let summary = try run.summary
        for outcome in CampaignRun.outcomes {
            #expect(Self.value(text, "apns_bulk_row_outcomes_total{outcome=\"\(outcome)\"}") == Double(summary[outcome] as? Int ?? -1))
        }
        for (reason, count) in summary["by_reason"] as? [String: Int] ?? [:] {
            #expect(Self.value(text, "apns_bulk_row_reasons_total{reason=\"\(reason)\"}") == Double(count))
        }
        #expect(Self.value(text, "apns_bulk_rows") == 2000)
        #expect(Self.value(text, "apns_bulk_rows_recorded_total") == 2000)
        #expect(Self.value(text, "apns_bulk_exit_status") == 0)
        #expect(Self.value(text, "apns_bulk_running") == 0)
        #expect(!text.contains("apns_bulk_dead_channel_rows_total"), "a broadcast's series only")
        let attempts = try run.records.reduce(0) { $0 + ($1["attempts"] as? Int ?? 0) }
        #expect(Self.value(text, "apns_bulk_requests_total") ?? 0 >= Double(attempts))
        #expect(Self.value(text, "apns_bulk_too_many_requests_answers_total") ?? 0 > 0)
        // Each connection is sent away after 400 requests: GOAWAYs, orderly ends and fresh connections.
        let goaways = Self.value(text, "apns_bulk_goaways_total") ?? 0
        #expect(goaways >= 2)
        #expect(Self.value(text, "apns_bulk_connections_opened_total") ?? 0 >= 2 + goaways)
        #expect(Self.value(text, "apns_bulk_connections_closed_total{cause=\"orderly\"}") ?? 0 >= goaways)
        let answered = ["delivered", "unregistered", "bad_token", "failed"].reduce(0) { $0 + (summary[$1] as? Int ?? 0) }
        #expect(Self.value(text, "apns_bulk_latency_seconds_count") == Double(answered))
        #expect(Self.value(text, "apns_bulk_latency_seconds_bucket{le=\"+Inf\"}") == Double(answered))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: rig.scratch.url.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty, "the temporary file is renamed over the textfile")
    }

    /// A broadcast's dead channels are failed rows, not dead tokens: they have a series of their own,
    /// equal to dead-channels.csv's lines, beside the outcomes and reasons send's series count.
    @Test func aBroadcastsTextfileCountsItsDeadChannelsInASeriesOfTheirOwn() throws {
        let rig = try BroadcastRig()
        let gone = BroadcastRig.channel(9)
        let respond = try rig.scratch.write("respond.csv", "\(gone),400,ChannelNotRegistered\n")
        let rows = 12
        // Rows 3, 6, 9 and 12 go to the deleted channel; the others, each to a channel of its own, are delivered.
        let input = try rig.csv("u.csv", (1...rows).map { "\($0 % 3 == 0 ? gone : BroadcastRig.channel($0)),\(BroadcastRig.update($0)),,," })
        let prom = rig.scratch.path("broadcast.prom")
        let run = try rig.broadcast(input, out: "out", ["--mock-option", "respond-file=\(respond)", "--metrics-out", prom])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        let check = try Command.run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", Self.promtool, prom])
        #expect(check.status == 0, "promtool check metrics: \(check.stdout) \(check.stderr)")
        let text = try String(contentsOfFile: prom, encoding: .utf8)
        #expect(try run.deadChannels.count == 4)
        #expect(Self.value(text, "apns_bulk_dead_channel_rows_total") == 4, "\(text)")
        #expect(text.contains("# TYPE apns_bulk_dead_channel_rows_total counter"))
        let summary = try run.summary
        for outcome in CampaignRun.outcomes {
            #expect(Self.value(text, "apns_bulk_row_outcomes_total{outcome=\"\(outcome)\"}") == Double(summary[outcome] as? Int ?? -1))
        }
        #expect(Self.value(text, "apns_bulk_row_outcomes_total{outcome=\"failed\"}") == 4)
        #expect(Self.value(text, "apns_bulk_row_reasons_total{reason=\"ChannelNotRegistered\"}") == 4)
        #expect(Self.value(text, "apns_bulk_exit_status") == 0)
    }

    @Test func pushgatewayGetsTheSeriesDuringAndAtTheEndUnderTheGivenJobAndInstance() throws {
        let rig = try Rig(rows: 1000, unregisteredRate: 0.03)
        let gateway = try Pushgateway(directory: rig.scratch)
        defer { gateway.stop() }
        let mock = try rig.mock(["--latency-ms", "100"])
        defer { mock.stop() }
        let out = rig.scratch.path("out-pushed")
        let process = try Binary.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
            + ["--max-streams", "20", "--pushgateway", gateway.url, "--metrics-job", "nightly_push",
               "--metrics-instance", "host-1", "--metrics-interval", "1"])
        let group = ["job": "nightly_push", "instance": "host-1"]
        var pushedWhileRunning = false
        while process.isRunning {
            if let text = try? gateway.get("/metrics"), Pushgateway.value(in: text, "apns_bulk_running", group) == 1 {
                pushedWhileRunning = true
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(pushedWhileRunning, "the series are pushed during the run, not only at its end")
        let run = CampaignRun(result: Binary.Result(status: 0, stdout: "", stderr: ""), outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 1000)
        let text = try gateway.get("/metrics")
        let summary = try run.summary
        for outcome in CampaignRun.outcomes {
            let labels = group.merging(["outcome": outcome]) { $1 }
            #expect(Pushgateway.value(in: text, "apns_bulk_row_outcomes_total", labels) == Double(summary[outcome] as? Int ?? -1))
        }
        #expect(Pushgateway.value(in: text, "apns_bulk_exit_status", group) == 0)
        #expect(Pushgateway.value(in: text, "apns_bulk_rows_recorded_total", group) == 1000)
        #expect(!text.contains("shard=\""), "no shard label for a run that is not a shard")
    }

    @Test func pushgatewayThatIsDownOnlyWarnsOnceAndChangesNoOutcome() throws {
        let rig = try Rig(rows: 800, invalidRate: 0.02, unregisteredRate: 0.03)
        let mock = try rig.mock(["--latency-ms", "100"])
        let run = try rig.send(mock, ["--pushgateway", "http://127.0.0.1:\(try LoopbackPort.free())", "--metrics-interval", "1",
                                      "--max-streams", "20"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 800)
        let summary = try run.summary
        #expect(summary["rejected"] as? Int == rig.totals.invalid)
        #expect(summary["unregistered"] as? Int == rig.totals.unregistered)
        #expect(summary["delivered"] as? Int == 800 - rig.totals.invalid - rig.totals.unregistered)
        let warnings = run.result.stderr.components(separatedBy: "cannot push metrics to the Pushgateway").count - 1
        #expect(warnings == 1, "one warning per kind, not per push: \(run.result.stderr)")
        #expect(run.result.stderr.contains("warning: "))
    }

    @Test func textfileIsRewrittenWhileTheRunSends() throws {
        let rig = try Rig(rows: 1000)
        let mock = try rig.mock(["--latency-ms", "100"])
        defer { mock.stop() }
        let prom = rig.scratch.path("during.prom")
        let out = rig.scratch.path("out-during")
        let process = try Binary.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
            + ["--max-streams", "20", "--metrics-out", prom, "--metrics-interval", "1"])
        var seenWhileRunning: [Double] = []
        while process.isRunning {
            // Renamed into place whole: every read is a complete exposition.
            if let text = try? String(contentsOfFile: prom, encoding: .utf8), Self.value(text, "apns_bulk_running") == 1 {
                #expect(text.hasSuffix("\n") && Self.value(text, "apns_bulk_exit_status") == nil)
                if let recorded = Self.value(text, "apns_bulk_rows_recorded_total"), !seenWhileRunning.contains(recorded) {
                    seenWhileRunning.append(recorded)
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        try CampaignRun(result: Binary.Result(status: 0, stdout: "", stderr: ""), outDirectory: out).checkEveryRowExactlyOnce(rows: 1000)
        #expect(seenWhileRunning.count >= 2, "rewritten during the run: \(seenWhileRunning)")
        #expect(seenWhileRunning.contains { $0 > 0 && $0 < 1000 })
        let text = try String(contentsOfFile: prom, encoding: .utf8)
        #expect(Self.value(text, "apns_bulk_running") == 0 && Self.value(text, "apns_bulk_rows_recorded_total") == 1000)
    }

    @Test func badMetricsFlagsStopBeforeAnythingIsSent() throws {
        let rig = try Rig(rows: 10)
        let mock = try rig.mock()
        defer { mock.stop() }
        let cases: [([String], String)] = [
            (["--pushgateway", "https://gw.example:9091"], "--pushgateway"),
            (["--pushgateway", "gw.example:9091"], "--pushgateway"),
            (["--metrics-out", rig.scratch.path("x.prom"), "--metrics-interval", "0"], "--metrics-interval"),
            (["--metrics-out", "/nonexistent-dir/x.prom"], "--metrics-out"),
        ]
        for (flags, named) in cases {
            let run = try rig.send(mock, flags)
            #expect(run.result.status == 1, "\(flags)")
            #expect(run.result.stderr.contains(named), "\(run.result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: run.outDirectory), "nothing written, nothing sent")
        }
    }

    @Test func sampleAlertRulesPassPromtoolAndFireWhenTheyShould() throws {
        let rules = Self.root + "/jobs/prometheus/apns-bulk-alerts.yml"
        let check = try Command.run(Self.promtool, ["check", "rules", rules])
        #expect(check.status == 0, "promtool check rules: \(check.stdout) \(check.stderr)")
        let test = try Command.run(Self.promtool, ["test", "rules", Self.root + "/jobs/prometheus/apns-bulk-alerts.test.yml"])
        #expect(test.status == 0, "promtool test rules: \(test.stdout) \(test.stderr)")
    }

    /// The value of the sample written exactly as `series` (name and labels) in an exposition text.
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
