import Foundation
import Testing
import TestSupport

/// `send --resume`: a campaign killed with SIGKILL is continued from its result log until every
/// row is recorded exactly once, and an `--out` holding a campaign is never overwritten.
@Suite(.serialized) struct SendResumeTests {
    typealias Rig = SendCampaignTests.Rig

    /// Starts `send` (plus `extra`), kills it with SIGKILL `seconds` after it began handing rows
    /// to its connections (a row marked in this run's `sent-rows`), and waits for it.
    static func sendKilled(_ rig: Rig, _ mock: MockServerProcess, input: String, out: String, after seconds: Double,
                           extra: [String]) throws {
        let previousRun = Self.sentRows(out).run
        let process = try Binary.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: input, out: out) + extra,
                                       stderrFile: out + ".stderr")
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline && !(Self.sentRows(out).run > previousRun && Self.sentRows(out).anySent) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        Thread.sleep(forTimeInterval: seconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The run that wrote `sent-rows` in `out` (its header's last 8 bytes; 0 without the file), and
    /// whether it has handed a row to a connection (a bit set past the 64-byte header). The file of
    /// the run before stays until the next run has counted it, so a waiter tells them apart by run.
    static func sentRows(_ out: String) -> (run: UInt8, anySent: Bool) {
        guard let bytes = FileManager.default.contents(atPath: out + "/sent-rows"), bytes.count > 64 else { return (0, false) }
        return (bytes[bytes.startIndex + 56], bytes.dropFirst(64).contains { $0 != 0 })
    }

    static func send(_ rig: Rig, _ mock: MockServerProcess, input: String, out: String, _ extra: [String] = []) throws -> CampaignRun {
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: input, out: out) + extra)
        return CampaignRun(result: result, outDirectory: out)
    }

    static func campaignRecord(_ out: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: out + "/campaign.json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// Requests the mock received beyond each device token's first: the rows crashes made `send`
    /// repeat (a row repeated after two crashes counts twice).
    static func sentAgain(_ mock: MockServerProcess) throws -> Int {
        let tokens = try mock.records().map { $0["device_token"] as? String ?? "" }
        return tokens.count - Set(tokens).count
    }

    /// The files a refused or finished run must leave exactly as they were.
    static func snapshot(_ out: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for name in ["campaign.json", "results.jsonl.zst", "dead-tokens.csv", "summary.json"] {
            files[name] = FileManager.default.contents(atPath: out + "/" + name)
        }
        return files
    }

    @Test func killedThreeTimesAtRandomMomentsThenResumedEveryRowIsRecordedOnce() throws {
        let rows = 30_000
        let rig = try Rig(rows: rows, invalidRate: 0.01, unregisteredRate: 0.03, seed: 11)
        let mock = try rig.mock(["--latency-ms", "2"])
        let out = rig.scratch.path("out-killed")
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<3).map { _ in Double.random(in: 0.05...1.2, using: &generator) }
        for (index, delay) in delays.enumerated() {
            try Self.sendKilled(rig, mock, input: rig.csv, out: out, after: delay, extra: index == 0 ? [] : ["--resume"])
        }
        let run = try Self.send(rig, mock, input: rig.csv, out: out, ["--resume"])
        mock.stop()
        let context = "kills after \(delays) s: \(run.result.stderr)"
        #expect(run.result.status == 0, "\(context)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        let summary = try run.summary
        #expect(summary["rejected"] as? Int == rig.totals.invalid, "\(context)")
        #expect(summary["unregistered"] as? Int == rig.totals.unregistered, "\(context)")
        // dead-tokens.csv covers the whole campaign: every dead row of every run, once.
        let deadRows = try run.deadTokens.compactMap { Int($0.last ?? "") }
        #expect(deadRows.count == rig.totals.unregistered && Set(deadRows).count == deadRows.count, "\(context)")
        // Every kill landed mid-run (the campaign takes longer than the kills), so resumes resent rows,
        // and counted them exactly: what the mock received again (a row resent after two crashes
        // counts twice), never more than the campaign's rows.
        let resent = summary["resent_after_crash"] as? Int ?? -1
        let again = try Self.sentAgain(mock)
        #expect(resent > 0 && resent < rows, "\(context)")
        #expect(CrashWindowTests.countMatches(resent, received: again, kills: 3),
                "the mock received \(again) requests again; \(context)")
    }

    @Test func aCompressedCampaignWithPerRowOverridesIsResumed() throws {
        let rows = 20_000
        let rig = try Rig(rows: rows, invalidRate: 0.01, seed: 12)
        // Per-row topic, push_type and collapse_id columns, then zstd.
        let script = """
            import csv, sys
            reader = csv.reader(open(sys.argv[1], newline=''))
            writer = csv.writer(open(sys.argv[2], 'w', newline=''), lineterminator='\\n')
            for number, row in enumerate(reader):
                writer.writerow(row + (['topic', 'push_type', 'collapse_id'] if number == 0
                                       else ['com.example.app', 'alert', 'c%d' % (number % 7) if number % 3 else '']))
            """
        let withOverrides = rig.scratch.path("overrides.csv")
        let python = try Command.run("/usr/bin/env", ["python3", "-c", script, rig.csv, withOverrides])
        try #require(python.status == 0, "\(python.stderr)")
        let compressed = withOverrides + ".zst"
        try #require(try Command.run("/usr/bin/zstd", ["-q", withOverrides, "-o", compressed]).status == 0)
        let mock = try rig.mock(["--latency-ms", "2"])
        let out = rig.scratch.path("out-zst")
        try Self.sendKilled(rig, mock, input: compressed, out: out, after: 0.5, extra: [])
        let run = try Self.send(rig, mock, input: compressed, out: out, ["--resume"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.summary["rejected"] as? Int == rig.totals.invalid)
        #expect(try run.summary["delivered"] as? Int == rows - rig.totals.invalid)
        let resent = try run.summary["resent_after_crash"] as? Int ?? -1
        let again = try Self.sentAgain(mock)
        #expect(resent > 0 && CrashWindowTests.countMatches(resent, received: again, kills: 1),
                "resent \(resent), received again \(again)")
    }

    @Test func aCampaignStoppedBySigtermIsFinishedByResumeWhichResendsItsAbortedRows() throws {
        // Still running when the signal comes at 0.8 s in this build's time: in a sanitized build
        // (time stretched, the binary nearer the mock's latency bound than the delay) more rows at a
        // longer latency, so that the run cannot end first.
        let scale = Int(TestTime.scale.rounded(.up))
        let rows = 20_000 * scale
        let rig = try Rig(rows: rows, unregisteredRate: 0.02, seed: 19)
        let mock = try rig.mock(["--latency-ms", "\(2 * scale)"])
        let out = rig.scratch.path("out-sigterm")
        let stopped = try rig.sendInterrupted(mock, out: out, after: 0.8, signal: SIGTERM)
        try #require(stopped.terminationStatus == 2, "the first run was stopped")
        let aborted = try CampaignRun(result: .init(status: 2, stdout: "", stderr: ""), outDirectory: out).summary["aborted"] as? Int ?? 0
        try #require(aborted > 0)
        let run = try Self.send(rig, mock, input: rig.csv, out: out, ["--resume"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.summary["aborted"] as? Int == 0)
        #expect(try run.summary["delivered"] as? Int == rows - rig.totals.unregistered)
        #expect(try run.summary["resent_after_crash"] as? Int == 0, "a SIGTERM is no crash: every row was recorded")
    }

    @Test func anOutHoldingACampaignIsRefusedWithoutResumeAndNothingIsOverwritten() throws {
        let rig = try Rig(rows: 500, unregisteredRate: 0.1, seed: 13)
        let mock = try rig.mock()
        defer { mock.stop() }
        let out = rig.scratch.path("out-taken")
        let first = try Self.send(rig, mock, input: rig.csv, out: out)
        try #require(first.result.status == 0, "\(first.result.stderr)")
        let before = Self.snapshot(out)
        let again = try Self.send(rig, mock, input: rig.csv, out: out)
        #expect(again.result.status == 1)
        #expect(again.result.stderr.contains("--resume"), "\(again.result.stderr)")
        #expect(!again.result.stderr.contains("Stack dump"))
        #expect(Self.snapshot(out) == before, "nothing overwritten")
    }

    @Test func resumingAFinishedCampaignSaysSoSendsNothingAndExitsZero() throws {
        let rig = try Rig(rows: 500, unregisteredRate: 0.1, seed: 14)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-finished")
        let first = try Self.send(rig, mock, input: rig.csv, out: out)
        try #require(first.result.status == 0, "\(first.result.stderr)")
        let requests = try { mock.stop(); return try mock.records().count }()
        let before = Self.snapshot(out)
        // The mock is gone: a run that tried to send would end unreachable, not with 0.
        let again = try Self.send(rig, mock, input: rig.csv, out: out, ["--resume", "--unreachable-timeout", "2"])
        #expect(again.result.status == 0, "\(again.result.stderr)")
        #expect(again.result.stdout.contains("already finished"), "\(again.result.stdout)")
        #expect(Self.snapshot(out) == before)
        #expect(requests == 500)
    }

    @Test func aSecondRunOfACampaignStillRunningIsRefused() throws {
        let rig = try Rig(rows: 20_000, seed: 20)
        let mock = try rig.mock(["--latency-ms", "5"])
        defer { mock.stop() }
        let out = rig.scratch.path("out-busy")
        let first = try Binary.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out))
        defer { first.stop(signal: SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: out + "/sent-rows") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let second = try Self.send(rig, mock, input: rig.csv, out: out, ["--resume"])
        #expect(first.isRunning, "the first run was still going")
        #expect(second.result.status == 1)
        #expect(second.result.stderr.contains("another apns-bulk is running the campaign"), "\(second.result.stderr)")
    }

    @Test func resumeWithADifferentInputIsRefused() throws {
        let rig = try Rig(rows: 500, seed: 15)
        let mock = try rig.mock()
        defer { mock.stop() }
        let out = rig.scratch.path("out-other")
        try Self.sendKilled(rig, mock, input: rig.csv, out: out, after: 0.3, extra: [])
        let other = rig.scratch.path("other.csv")
        try #require(try Binary.run(["gen", "--rows", "500", "--out", other, "--seed", "16"]).status == 0)
        let before = Self.snapshot(out)
        let run = try Self.send(rig, mock, input: other, out: out, ["--resume"])
        #expect(run.result.status == 1)
        #expect(run.result.stderr.contains("not the input of the campaign"), "\(run.result.stderr)")
        #expect(Self.snapshot(out) == before)
    }

    @Test func resumeNeedsARegularFileAndSaysSoWithoutWaitingOnAPipe() throws {
        let rig = try Rig(rows: 10, seed: 17)
        let fifo = rig.scratch.path("campaign.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        let mock = try rig.mock()
        defer { mock.stop() }
        let run = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: fifo,
                                                   out: rig.scratch.path("out-fifo")) + ["--resume", "--no-prescan"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("--resume needs the input to be a regular file"), "\(run.stderr)")
    }

    @Test func resumeIntoAnEmptyDirectoryStartsTheCampaign() throws {
        let rig = try Rig(rows: 300, seed: 18)
        let mock = try rig.mock()
        defer { mock.stop() }
        let run = try Self.send(rig, mock, input: rig.csv, out: rig.scratch.path("out-new"), ["--resume"])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 300)
        #expect(try run.summary["resent_after_crash"] as? Int == 0)
        #expect(try Self.campaignRecord(run.outDirectory)["runs"] as? Int == 1)
    }
}
