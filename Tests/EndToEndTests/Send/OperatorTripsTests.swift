import Foundation
import Testing
import TestSupport

/// Issue 29 point 7: small things an operator trips over, each seen as the operator sees it,
/// through the built binary (the embedded mock or the mock server over TLS on 127.0.0.1).
@Suite(.serialized) struct OperatorTripsTests {
    typealias Rig = SendCampaignTests.Rig

    /// `send` with the embedded mock and a small rig, plus `extra`.
    static func sendToMock(_ rig: Rig, out: String, _ extra: [String]) throws -> Binary.Result {
        try Binary.run(["send", "--input", rig.csv, "--endpoint", "mock", "--progress", "never", "--out", out] + extra)
    }

    /// Help text with its line wrapping undone.
    static func flat(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }

    /// Clock: the binary's wall clock, started by libfaketime at a fixed second, so the name it
    /// picks does not depend on how soon a loaded machine runs it; slack: the next 29 seconds are
    /// taken too (the clock runs on from process start to the moment the directory is named).
    @Test func twoRunsStartedInTheSameSecondWithoutOutEachGetADirectoryOfTheirOwn() throws {
        let rig = try Rig(rows: 20)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let start = try #require(formatter.date(from: "20260101T000000Z"))
        // Another run's campaign under each second's name the run may start in.
        let stamps = (0..<30).map { formatter.string(from: start.addingTimeInterval(Double($0))) }
        for stamp in stamps {
            let taken = rig.scratch.path("apns-bulk-out/\(stamp)")
            try FileManager.default.createDirectory(atPath: taken, withIntermediateDirectories: true)
            _ = try rig.scratch.write("apns-bulk-out/\(stamp)/campaign.json", "{}\n")
        }
        let result = try FakeTime.run(offset: "@2026-01-01 00:00:00",
                                      ["send", "--input", rig.csv, "--endpoint", "mock", "--progress", "never"],
                                      in: rig.scratch.url.path)
        #expect(result.status == 0, "\(result.stderr)")
        let claimed = try #require(stamps.first { result.stdout.contains("./apns-bulk-out/\($0)-2/results.jsonl.zst") },
                                   "\(result.stdout)")
        try CampaignRun(result: result, outDirectory: rig.scratch.path("apns-bulk-out/\(claimed)-2"))
            .checkEveryRowExactlyOnce(rows: 20)
    }

    @Test func metricsOutIntoAMissingDirectorySaysTheDirectoryDoesNotExist() throws {
        let rig = try Rig(rows: 3)
        let missing = rig.scratch.path("no-such-dir")
        let result = try Self.sendToMock(rig, out: rig.scratch.path("out"), ["--metrics-out", missing + "/apns_bulk.prom"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--metrics-out \(missing)/apns_bulk.prom: the directory \(missing) does not exist"),
                "\(result.stderr)")
        #expect(result.stderr.contains("mkdir -p \(missing)") && !result.stderr.contains("not writable"))
    }

    @Test func metricsIntervalZeroIsRefusedNamingTheFlagAndItsRange() throws {
        let rig = try Rig(rows: 3)
        let out = rig.scratch.path("out")
        let result = try Self.sendToMock(rig, out: out, ["--metrics-interval", "0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--metrics-interval 0.0: give a number of seconds, at least 1"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"))
    }

    @Test func aJobFileTypoNamesTheFileTheLineAndTheNearestKey() throws {
        let rig = try Rig(rows: 3)
        let job = try rig.scratch.write("job.toml", "topic = \"com.example.app\"\nconection = 8\n")
        let result = try Self.sendToMock(rig, out: rig.scratch.path("out"), ["--config", job])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--config \(job), line 2: unknown key `conection`; did you mean `connections`?"),
                "\(result.stderr)")
    }

    @Test func aJobFileValueOfTheWrongTypeIsReportedEvenWhenTheCommandLineOverridesIt() throws {
        let rig = try Rig(rows: 3)
        let job = try rig.scratch.write("job.toml", "progress = \"never\"\nconnections = \"eight\"\n")
        let result = try Self.sendToMock(rig, out: rig.scratch.path("out"), ["--config", job, "--connections", "2"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--config \(job), line 2: `connections` is a string (\"eight\"); it must be an integer"),
                "\(result.stderr)")
    }

    @Test func pushTypeHelpSaysWhatEveryRequestCarries() throws {
        let help = Self.flat(try Binary.run(["send", "--help"]).stdout)
        #expect(help.contains("Every request carries the header, as APNs expects. Default: alert."), "\(help)")
        #expect(!help.contains("apns-push-type (alert, background, voip, ...). Default: none"))
    }

    @Test func feedbackUsageOffersTheP12FileBesideTheCertificateAndKey() throws {
        let help = Self.flat(try Binary.run(["feedback", "--help"]).stdout)
        #expect(help.contains("apns-bulk feedback --out <out> --cert-file <cert-file> --cert-key-file <key-file> | --p12-file <p12-file> [--endpoint"),
                "\(help)")
    }

    @Test func aForeignResultLogInOutIsNamedForWhatItIs() throws {
        let rig = try Rig(rows: 3)
        let out = rig.scratch.path("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        _ = try rig.scratch.write("out/results.jsonl.zst", "not ours")
        let result = try Self.sendToMock(rig, out: out, [])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(out) already holds results.jsonl.zst but no campaign.json"), "\(result.stderr)")
        #expect(!result.stderr.contains("(campaign.json, results.jsonl.zst)"))
        #expect(try String(contentsOfFile: out + "/results.jsonl.zst", encoding: .utf8) == "not ours")
    }

    @Test func anUnknownTemplateColumnNamesTheTemplateFile() throws {
        let rig = try Rig(rows: 3)
        let csv = try rig.scratch.write("c.csv", "device_token\n\(String(repeating: "ab", count: 32))\n")
        let template = try rig.scratch.write("t.json", #"{"aps":{"alert":"{{first_name}}"}}"#)
        let result = try Binary.run(["send", "--input", csv, "--endpoint", "mock", "--progress", "never",
                                     "--out", rig.scratch.path("out"), "--payload-template", template])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--payload-template \(template): placeholder {{first_name}} names a column \(csv) does not have"),
                "\(result.stderr)")
    }

    @Test func aTemplateFilesFinalNewlineIsNotPartOfThePayloadSent() throws {
        let rig = try Rig(rows: 1)
        let token = String(repeating: "cd", count: 32)
        let csv = try rig.scratch.write("c.csv", "device_token,name\n\(token),Ann\n")
        let template = try rig.scratch.write("t.json", "{\"aps\":{\"alert\":\"Hi {{name}}\"}}\n")
        let (run, mock) = try SendTemplateTests.send(rig, input: csv, template: template)
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1)
        let payloads = try mock.records().compactMap { $0["payload"] as? String }
        #expect(payloads == [#"{"aps":{"alert":"Hi Ann"}}"#])
    }

    @Test func spreadOfZeroSecondsMeansNoSpread() throws {
        let rig = try Rig(rows: 30)
        let out = rig.scratch.path("out")
        let result = try Self.sendToMock(rig, out: out, ["--spread", "0s"])
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 30)
        let summary = try run.summary
        #expect(summary["spread_s"] == nil && summary["rate_per_s"] == nil, "not paced")
        #expect(!result.stdout.contains("paced at"))
    }
}
