import CampaignTestSupport
import APNs
import Foundation
import MockAPNs
import Testing
import TestSupport
import Transport
@testable import Pipeline
@testable import Report

/// What a campaign writes besides its result files comes from the exporters it is given: the
/// standard ones give a program's rows from memory the sidecar, the metrics and the page that
/// `apns-bulk send` writes for a file; a dry run gets the page alone; a campaign without exporters
/// writes its result files only.
@Suite struct StandardExportersTests {
    static let resultFiles = ["dead-tokens.csv", "results.jsonl.zst", "summary.json"]

    /// Runs 50 rows against one mock with `exporters` — from memory, or from a CSV file when
    /// `fromFile` — and returns the output directory's files and the campaign's result.
    static func run(exporters: [CampaignExporter], directory: TemporaryDirectory, fromFile: Bool = false,
                    configure: (inout CampaignConfiguration) -> Void = { _ in }) throws -> (files: [String], result: Campaign.Result) {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        var configuration = CampaignConfiguration(
            authentication: .token(try InProcessCampaign.tokenSource()), endpoints: mocks.endpoints,
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: directory.path("out"))
        configuration.defaults = HeaderValues(topic: "com.example.app")
        configuration.connections = 1
        configuration.reactorThreads = 1
        configuration.exporters = exporters
        configure(&configuration)
        let rows = (1...50).map { CampaignRow(deviceToken: InProcessCampaign.token($0), payload: #"{"aps":{"alert":"hi"}}"#) }
        let result: Campaign.Result
        if fromFile {
            configuration.inputPath = try directory.write("campaign.csv", "device_token\n" + rows.map { $0.deviceToken + "\n" }.joined())
            configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
            result = try Campaign(configuration: configuration).run()
        } else {
            result = try Campaign(configuration: configuration).run(rows: rows)
        }
        // Every row ends in exactly one outcome.
        #expect(result.summary.rows == 50 && result.summary.accountingHolds)
        let files = try FileManager.default.contentsOfDirectory(atPath: configuration.outputDirectory)
            .filter { !$0.hasPrefix(".") && $0 != "campaign.json" && $0 != "sent-rows" }
        return (files.sorted(), result)
    }

    @Test func rowsFromMemoryWithTheStandardExportersGetTheSidecarTheMetricsAndThePage() throws {
        let directory = try TemporaryDirectory()
        let metrics = directory.path("campaign.prom")
        let (files, _) = try Self.run(exporters: CampaignExporter.standard, directory: directory) { configuration in
            var options = MetricsOptions(instance: "library")
            options.textfilePath = metrics
            configuration.metrics = options
        }
        #expect(files == (Self.resultFiles + [ReportPageFile.name, TimelineFile.name]).sorted())
        let sidecar = try #require(TimelineFile.read(path: directory.path("out/" + TimelineFile.name)))
        let kinds = sidecar.lines.compactMap { line -> String? in if case .event(let event) = line { event.kind } else { nil } }
        #expect(kinds == ["start", "end"])
        let delivered = sidecar.lines.reduce(0) { sum, line in
            if case .second(let second) = line { sum + second.outcomes[.delivered] } else { sum }
        }
        #expect(delivered == 50, "the sidecar's seconds add up to the run")
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains("apns_bulk_row_outcomes_total{outcome=\"delivered\"} 50"), "\(text.prefix(2000))")
        let page = try String(contentsOfFile: directory.path("out/" + ReportPageFile.name), encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("</html>"))
    }

    @Test func aCampaignWithoutExportersWritesItsResultFilesOnly() throws {
        let directory = try TemporaryDirectory()
        let (files, _) = try Self.run(exporters: [], directory: directory)
        #expect(files == Self.resultFiles)
    }

    @Test func aDryRunWithTheStandardExportersGetsThePageAlone() throws {
        let directory = try TemporaryDirectory()
        let metrics = directory.path("campaign.prom")
        let (files, result) = try Self.run(exporters: CampaignExporter.standard, directory: directory, fromFile: true) { configuration in
            configuration.dryRun = true
            var options = MetricsOptions(instance: "library")
            options.textfilePath = metrics
            configuration.metrics = options
        }
        #expect(result.summary.wouldSend == 50)
        #expect(files == (Self.resultFiles + [ReportPageFile.name]).sorted())
        #expect(!FileManager.default.fileExists(atPath: metrics), "a dry run exports no metrics")
    }
}
