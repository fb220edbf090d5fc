import Foundation
import Testing
import TestSupport

/// `send` names every file it writes for the operator, report.html included: in its summary on
/// stdout and in `send --help`.
@Suite(.serialized) struct SendReportPathTests {
    @Test func sendPrintsTheReportPageBesideTheOtherFilesItWrote() throws {
        let rig = try SendCampaignTests.Rig(rows: 50)
        let run = try EmbeddedMockRehearsalTests.send(rig, "out", ["--topic", MockServerProcess.topic])
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 50)
        let page = run.outDirectory + "/report.html"
        #expect(FileManager.default.fileExists(atPath: page))
        for file in ["results.jsonl.zst", "dead-tokens.csv", "summary.json", "report.html"] {
            #expect(run.result.stdout.contains(run.outDirectory + "/" + file), "\(file): \(run.result.stdout)")
        }
    }

    @Test func sendHelpNamesTheReportPage() throws {
        let help = try Binary.run(["send", "--help"])
        #expect(help.stdout.contains("report.html"), "\(help.stdout.prefix(600))")
    }
}
