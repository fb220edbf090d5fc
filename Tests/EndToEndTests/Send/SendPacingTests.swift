import Foundation
import Testing
import TestSupport

/// `send --rate` / `--spread` through the built binary against the `mock-server` process: the
/// pace the summaries report, the run's length and how the mock's record of arrivals spreads.
/// The pacer's exact bound (any window) is PipelineTests' PacingCampaignTests, on the sender's own
/// clock: arrival times also measure how a loaded machine schedules the mock.
@Suite(.serialized) struct SendPacingTests {
    /// Milliseconds from the first request the mock recorded to the last, and how many it recorded.
    static func arrivalSpread(_ mock: MockServerProcess) throws -> (milliseconds: Int, requests: Int) {
        let times = try mock.records().compactMap { $0["time_ms"] as? Int }.sorted()
        return ((times.last ?? 0) - (times.first ?? 0), times.count)
    }

    /// 200 rows spread over 2 s: 100/s, about two seconds, and the summaries say the pace.
    /// Clocks: the run's own (elapsed, a bound below only: it also holds start-up, key loading and
    /// handshakes, which a loaded machine stretches without the pacer being slow) and the mock's
    /// arrivals, the paced part alone (at least 1.3 s: slack 0.5 s of scheduler delay, unpaced it
    /// is a few ms; at most 3.5 s: slack 1.5 s, times the sanitizers' TestTime scale).
    @Test func spreadOverTwoSecondsSendsTwoHundredRowsAtAHundredPerSecond() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let mock = try rig.mock()
        defer { mock.stop() }
        let run = try rig.send(mock, ["--spread", "2s", "--connections", "4"])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        let summary = try run.summary
        #expect(summary["rate_per_s"] as? Double == 100)
        #expect(summary["spread_s"] as? Double == 2)
        let elapsed = summary["elapsed_s"] as? Double ?? 0
        #expect(elapsed >= 1.8, "took \(elapsed) s")
        #expect(run.result.stdout.contains("paced at 100/s (--spread)"), "\(run.result.stdout)")
        mock.stop()
        let (spread, requests) = try Self.arrivalSpread(mock)
        #expect(requests == 200)
        #expect(spread >= 1300, "arrivals spread over \(spread) ms")
        #expect(Double(spread) <= 2000 + TestTime.seconds(1.5) * 1000, "arrivals spread over \(spread) ms")
    }

    /// `--spread` on a `--resume` spreads the rows still to send, not the whole campaign: a run
    /// stopped by SIGTERM after about half its rows, resumed with `--spread 2s`, goes at half of
    /// what the whole campaign would get, and the campaign ends with every row once.
    @Test func spreadOnAResumeSpreadsTheRowsLeft() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let mock = try rig.mock()
        defer { mock.stop() }
        let out = rig.scratch.path("out-resume-spread")
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        let first = try Binary.start(arguments + ["--rate", "100"])
        // Clock: the test's, from the first row handed to a connection (a loaded machine can take
        // longer than a second just to start the binary); about half of the 2 s the rows take.
        SendCampaignTests.Rig.waitUntilSending(first, out: out)
        Thread.sleep(forTimeInterval: 1)
        kill(first.processIdentifier, SIGTERM)
        first.waitUntilExit()
        #expect(first.terminationStatus == 2)
        let stopped = try CampaignRun(result: Binary.Result(status: 2, stdout: "", stderr: ""), outDirectory: out).summary
        let left = 200 - (stopped["delivered"] as? Int ?? 0)
        try #require(left > 20 && left < 180, "\(left) rows left after the stop")

        let resumed = CampaignRun(result: try Binary.run(arguments + ["--resume", "--spread", "2s"]), outDirectory: out)
        #expect(resumed.result.status == 0, "\(resumed.result.stderr)")
        try resumed.checkEveryRowExactlyOnce(rows: 200)
        #expect(try resumed.summary["rate_per_s"] as? Double == Double(left) / 2)
    }

    /// A job file's `rate` paces the run like the flag.
    @Test func aJobFileRateIsThePace() throws {
        let rig = try SendCampaignTests.Rig(rows: 60)
        let mock = try rig.mock()
        defer { mock.stop() }
        let job = try rig.scratch.write("paced.toml", "rate = 100.0\n")
        let run = try rig.send(mock, ["--config", job])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 60)
        #expect(try run.summary["rate_per_s"] as? Double == 100)
        // Clock: the run's own; a floor (60 rows at 100/s), so load cannot break it.
        #expect(try run.summary["elapsed_s"] as? Double ?? 0 >= 0.5)
    }

    /// Pace settings that cannot work stop the run before anything is sent, exit 1, saying why.
    @Test func paceSettingsThatCannotWorkAreRefusedBeforeSending() throws {
        let rig = try SendCampaignTests.Rig(rows: 20)
        let mock = try rig.mock()
        defer { mock.stop() }
        let cases: [([String], [String])] = [
            (["--rate", "100", "--spread", "30m"], ["--rate and --spread", "give one"]),
            (["--spread", "30m", "--no-prescan"], ["--spread 30m", "row count", "--no-prescan", "--rate"]),
            (["--rate", "0"], ["--rate 0", "positive"]),
            (["--rate", "-5"], ["--rate -5", "positive"]),
            (["--rate", "fast"], ["fast"]),
            (["--spread", "30"], ["--spread 30", "units"]),
            (["--spread", "2d"], ["--spread 2d", "units"]),
        ]
        for (extra, words) in cases {
            let run = try rig.send(mock, extra)
            #expect(run.result.status == 1, "\(extra): \(run.result.stderr)")
            for word in words { #expect(run.result.stderr.contains(word), "\(extra) should say \(word): \(run.result.stderr)") }
            #expect(!FileManager.default.fileExists(atPath: run.outDirectory + "/results.jsonl.zst"), "\(extra)")
        }
        // stdin is read once, with no prescan: nothing to spread over.
        let piped = try Command.run("/bin/sh", ["-c", "cat \"$1\" | \"$2\" send --input - --endpoint mock --spread 2s --out \"$3\"",
                                                "sh", rig.csv, Binary.url.path, rig.scratch.path("out-piped")])
        #expect(piped.status == 1, "\(piped.stderr)")
        #expect(piped.stderr.contains("--input - is a stream"), "\(piped.stderr)")
        mock.stop()
        #expect(try mock.records().isEmpty, "nothing reached the mock")
    }
}
