import CampaignTestSupport
import Foundation
import MockAPNs
import Testing
import TestSupport
@testable import Pipeline
@testable import Report

/// Campaigns against the real mock server pushing to Debian's real Pushgateway.
@Suite(.serialized) struct MetricsPushgatewayTests {
    @Test func pushgatewayServesTheFinalSeriesUnderJobInstanceAndShard() throws {
        let directory = try TemporaryDirectory()
        let gateway = try Pushgateway(directory: directory)
        defer { gateway.stop() }
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let run = try InProcessCampaign.runWithExporters(rows: 300, mocks: mocks) { configuration in
            var options = MetricsOptions(instance: "pod a/7")
            options.pushgateway = try? PushgatewayTarget(parsing: gateway.url + "/")
            options.job = "nightly"
            options.shard = "2"
            configuration.metrics = options
        }
        let group = ["job": "nightly", "instance": "pod a/7", "shard": "2"]
        let summary = run.result.summary
        let served = try gateway.get("/metrics")
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            Pushgateway.value(in: served, name, group.merging(labels) { $1 })
        }
        for outcome in Outcome.allCases {
            #expect(value("apns_bulk_row_outcomes_total", ["outcome": outcome.rawValue]) == Double(summary.counts[outcome]))
        }
        #expect(value("apns_bulk_exit_status") == 0)
        #expect(value("apns_bulk_running") == 0)
        #expect(value("apns_bulk_rows") == 300)
        #expect(value("apns_bulk_latency_seconds_count") == Double(summary.latency.count))
        #expect(value("apns_bulk_finish_time_seconds") ?? 0 > 1_700_000_000)
    }

    @Test func pushgatewayTargetsParseAndRefuseWhatTheyCannotSpeak() throws {
        let plain = try PushgatewayTarget(parsing: "http://gw.example:9091/prefix/")
        #expect(plain == PushgatewayTarget(host: "gw.example", port: 9091, pathPrefix: "/prefix"))
        let six = try PushgatewayTarget(parsing: "http://[::1]:9091")
        #expect(six.host == "::1" && six.port == 9091 && six.authority == "[::1]:9091")
        #expect(try PushgatewayTarget(parsing: "http://gw").port == 80)
        for bad in ["https://gw:9091", "gw:9091", "http://:9091", "http://gw:99999", "http://user:pw@gw:9091"] {
            #expect(throws: PushgatewayTargetError.self) { try PushgatewayTarget(parsing: bad) }
        }
    }

    @Test func groupingPathEncodesValuesThePathCannotCarry() {
        var options = MetricsOptions(instance: "pod a/7")
        options.shard = "3"
        #expect(options.groupingPath == "/metrics/job/apns_bulk/instance@base64/cG9kIGEvNw/shard/3")
    }

    @Test func labelValuesAreEscaped() {
        #expect(MetricsText.escapeLabelValue("a\\b\"c\nd") == #"a\\b\"c\nd"#)
        var totals = RunRecorder.Totals(startedAtUnix: 1)
        totals.byReason = ["Odd\"Reason\n": 2]
        let text = MetricsText.render(totals)
        #expect(text.contains(#"apns_bulk_row_reasons_total{reason="Odd\"Reason\n"} 2"#))
        #expect(!text.contains("apns_bulk_exit_status"), "the exit status is there at the end only")
    }

    /// One HELP per series name whatever the run: a node's textfiles and a Pushgateway hold send's
    /// and broadcast's series side by side. A broadcast adds its dead channels' own series.
    @Test func aBroadcastAddsItsDeadChannelRowsAndKeepsEverySharedSeriesHelp() {
        var totals = RunRecorder.Totals(startedAtUnix: 1)
        totals.outcomes[.failed] = 3
        totals.byReason = ["ChannelNotRegistered": 2, "BadExpirationDate": 1]
        let send = MetricsText.render(totals)
        let broadcast = MetricsText.render(totals, broadcast: true)
        #expect(broadcast.contains("\napns_bulk_dead_channel_rows_total 2\n"))
        #expect(!send.contains("dead_channel_rows_total"))
        let help = { (text: String) in Set(text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }) }
        #expect(help(send).isSubset(of: help(broadcast)), "the same HELP for each series either run writes")
        #expect(help(broadcast).subtracting(help(send)).count == 1)
    }
}
