import Foundation
import Testing
import TestSupport

/// Configuration mistakes that used to look like something else (120 s of silence, "Missing
/// value", "has no payload column", "NSCocoaErrorDomain error 512") are named for what they are,
/// through the built binary, as a user meets them.
@Suite(.serialized) struct SendMistakesTests {
    /// A run that must stop before sending anything: status 1 and these words on stderr.
    func expectUsageError(_ rig: SendCampaignTests.Rig, _ mock: MockServerProcess, _ extra: [String],
                          says words: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try rig.send(mock, extra)
        #expect(run.result.status == 1, "\(extra): \(run.result.stderr)", sourceLocation: sourceLocation)
        for word in words {
            #expect(run.result.stderr.contains(word), "\(extra) should say \(word): \(run.result.stderr)",
                    sourceLocation: sourceLocation)
        }
        #expect(!run.result.stderr.contains("Missing value"), "\(extra): \(run.result.stderr)", sourceLocation: sourceLocation)
        #expect(!run.result.stderr.contains("Domain"), "\(extra): \(run.result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aNameThatDoesNotResolveStopsTheRunWithExitTwoAndSaysSo() throws {
        let rig = try SendCampaignTests.Rig(rows: 300)
        let out = rig.scratch.path("out-dns")
        let arguments = ["send", "--input", rig.csv, "--endpoint", "no-such-host.invalid:443",
                         "--endpoint", "another-missing-name.invalid:443", "--key-file", rig.key,
                         "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
                         "--topic", MockServerProcess.topic, "--connections", "4", "--progress", "never",
                         "--unreachable-timeout", "20", "--out", out]
        let started = Date()
        let result = try Binary.run(arguments)
        let seconds = Date().timeIntervalSince(started)
        #expect(result.status == 2, "\(result.stderr)")
        #expect((result.stdout + result.stderr).contains("cannot resolve no-such-host.invalid, another-missing-name.invalid"), "\(result.stderr)")
        // DNS answers NXDOMAIN for .invalid (RFC 6761): the first lookup on each endpoint decides.
        #expect(seconds < 15, "stopped after \(seconds) s, not at the first failed lookups")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 300)
        let reasons = Set(try run.records.compactMap { $0["reason"] as? String })
        #expect(reasons == ["CannotResolve"])
        #expect(try run.summary["aborted"] as? Int == 300)
    }

    @Test func connectionsAreCappedAtSixtyFourPerEndpointWithTheReason() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let mock = try rig.mock()
        defer { mock.stop() }
        try expectUsageError(rig, mock, ["--connections", "100000"], says: ["--connections 100000", "at most 64 per endpoint", "attack"])
        try expectUsageError(rig, mock, ["--connections", "65"], says: ["at most 64 per endpoint"])
        let allowed = try rig.send(mock, ["--connections", "64"])
        #expect(allowed.result.status == 0, "\(allowed.result.stderr)")
        try allowed.checkEveryRowExactlyOnce(rows: 10)
    }

    @Test func aPresentButInvalidValueSaysWhatIsWrongWithIt() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let mock = try rig.mock()
        try expectUsageError(rig, mock, ["--connections", "-1"], says: ["--connections -1: must be at least 1"])
        try expectUsageError(rig, mock, ["--max-attempts", "-3"], says: ["--max-attempts -3: must be at least 1"])
        try expectUsageError(rig, mock, ["--unreachable-timeout", "-5"], says: ["--unreachable-timeout", "positive number of seconds"])
        mock.stop()
        #expect(try (mock.stats()["requests"] as? Int ?? -1) == 0)
    }

    @Test(arguments: [
        ("endpoint = 12345", ["`endpoint` is an integer (12345)", "a string or an array of strings"]),
        ("connections = [1, 2]", ["`connections` is an array", "must be an integer"]),
        ("endpoint = [\"127.0.0.1:1\", 7]", ["`endpoint` item 2 is an integer (7)", "must be a string"]),
        ("max-attempts = true", ["`max-attempts` is a boolean (true)", "must be an integer"]),
        ("connections = -3", ["--connections -3: must be at least 1"]),
        ("unreachable-timeout = \"soon\"", ["`unreachable-timeout` is a string (\"soon\")", "must be a number"]),
        ("resume = 1", ["`resume` is an integer (1)", "must be a boolean"]),
    ])
    func aJobFileValueOfTheWrongTypeNamesTheKeyTheTypeFoundAndTheTypeWanted(toml: String, words: [String]) throws {
        let scratch = try TemporaryDirectory()
        let job = try scratch.write("job.toml", toml + "\n")
        let input = try scratch.write("c.csv", "device_token,payload\n" + String(repeating: "ab", count: 32) + ",{}\n")
        // No --endpoint here: the command line's would win over the job file's.
        let result = try Binary.run(["send", "--config", job, "--input", input, "--out", scratch.path("out")])
        #expect(result.status == 1, "\(toml): \(result.stderr)")
        for word in words { #expect(result.stderr.contains(word), "\(toml) should say \(word): \(result.stderr)") }
        #expect(!result.stderr.contains("Missing value"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out/results.jsonl.zst")))
    }

    @Test func aJobFileStillSetsNumbersStringsAndLists() throws {
        let scratch = try TemporaryDirectory()
        let job = try scratch.write("job.toml", """
            endpoint = ["mock"]
            connections = 3
            unreachable-timeout = 30
            response-timeout = 12.5
            priority = 10
            no-prescan = false
            progress = "never"
            """)
        let input = try scratch.write("c.csv", "device_token,payload\n" + String(repeating: "ab", count: 32) + ",{}\n")
        let out = scratch.path("out")
        let result = try Binary.run(["send", "--config", job, "--input", input, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 1)
        #expect(try run.summary["connections"] as? Int == 3)
    }

    @Test func aHeaderThatIsNotUTF8SaysSo() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let input = rig.scratch.path("latin1.csv")
        var bytes = Array("device_token,pay".utf8) + [0xFF] + Array("load\n".utf8)
        bytes += Array((String(repeating: "ab", count: 32) + ",{}\n").utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let mock = try rig.mock()
        defer { mock.stop() }
        let run = try rig.send(mock, input: input)
        #expect(run.result.status == 1)
        #expect(run.result.stderr.contains("header field 2"), "\(run.result.stderr)")
        #expect(run.result.stderr.contains("not valid UTF-8"), "\(run.result.stderr)")
        #expect(!run.result.stderr.contains("no payload column"), "\(run.result.stderr)")
    }

    @Test func anHTTPSURLAsEndpointIsExplained() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let mock = try rig.mock()
        defer { mock.stop() }
        try expectUsageError(rig, mock, ["--endpoint", "https://127.0.0.1:443"],
                             says: ["--endpoint https://127.0.0.1:443", "no scheme", "127.0.0.1:443"])
        let run = try rig.send(mock, ["--endpoint", "https://127.0.0.1:443"])
        #expect(!run.result.stderr.contains("brackets"), "\(run.result.stderr)")
    }

    @Test func anOutDirectoryUnderARegularFileNamesTheFile() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let mock = try rig.mock()
        defer { mock.stop() }
        let file = try rig.scratch.write("plain-file", "x")
        let out = file + "/out"
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out))
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(file) is a file, not a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        // Foundation's own wording of the error (its code, 512), not the digits a temporary path may hold.
        #expect(!result.stderr.contains("error 512") && !result.stderr.contains("Code=512"), "\(result.stderr)")
    }

    /// Every file of `--out` after a run under `umask`, by name, with its permission bits.
    func outputModes(umask: String, scratch: TemporaryDirectory, input: String) throws -> [String: Int] {
        let out = scratch.path("out-umask-\(umask)")
        let script = "umask \(umask); exec \"$0\" \"$@\""
        let result = try Command.run("/bin/sh", ["-c", script, Binary.url.path, "send", "--input", input, "--endpoint", "mock",
                                                 "--progress", "never", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        var modes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: out) {
            var info = stat()
            #expect(lstat(out + "/" + name, &info) == 0)
            modes[name] = Int(info.st_mode & 0o777)
        }
        return modes
    }

    @Test func everyOutputFileGetsTheSameModeWithinTheUmask() throws {
        let scratch = try TemporaryDirectory()
        var csv = "device_token,payload\n"
        for row in 0..<50 { csv += String(format: "%064x", row + 1) + ",{}\n" }
        let input = try scratch.write("c.csv", csv)
        let files: Set = ["campaign.json", "results.jsonl.zst", "dead-tokens.csv", "summary.json"]
        for (umask, mode) in [("000", 0o644), ("022", 0o644), ("027", 0o640), ("077", 0o600)] {
            let modes = try outputModes(umask: umask, scratch: scratch, input: input)
            #expect(files.isSubset(of: Set(modes.keys)), "umask \(umask): \(modes)")
            for (name, found) in modes {
                #expect(found == mode, "umask \(umask): \(name) is \(String(found, radix: 8)), not \(String(mode, radix: 8))")
            }
        }
    }
}
