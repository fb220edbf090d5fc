import Foundation
import Testing
import TestSupport

/// kill -9 while both cores are busy: the result log is at most ~0.25 s behind the answers, so a
/// resume sends again only rows answered just before the kill; it counts them exactly
/// (`resent_after_crash` is what the mock saw twice); and `--no-resend-lost` records them
/// `gave_up` `LostInCrash` instead, never sending them again.
@Suite(.serialized) struct CrashWindowTests {
    typealias Rig = SendCampaignTests.Rig

    /// What one kill cost, from the mock's record and the resumed campaign.
    struct Kill {
        /// Requests beyond each token's first: rows the crash made `send` repeat.
        let sentTwice: Int
        /// Requests the mock received in the last half second before the kill.
        let answeredInLastHalfSecond: Int
        let resumed: CampaignRun
        /// Holds the scratch directory (the campaign's files) until the kill is judged.
        let rig: Rig
    }

    /// Two busy loops (`sh -c 'while :; do :; done'`), one a core, for as long as `body` runs.
    static func withBothCoresBusy<T>(_ body: () throws -> T) throws -> T {
        var loops: [Process] = []
        defer {
            for loop in loops { loop.stop(signal: SIGKILL) }
        }
        for _ in 0..<2 {
            loops.append(try Command.start("/bin/sh", ["-c", "while :; do :; done"]))
        }
        return try body()
    }

    /// `resent_after_crash` against the requests the mock received again. A row counts once its
    /// request is submitted to a connection, before its bytes are written to the socket, so the
    /// count is never less than what the mock saw; it is more only by rows a kill caught between
    /// the two (a reactor turn's, at most the 100 the run keeps in flight: none in most kills, 2 in
    /// one kill of 28 with five busy loops on two cores).
    static func countMatches(_ resent: Int, received: Int, kills: Int) -> Bool {
        resent >= received && resent <= received + 100 * kills
    }

    /// Starts `send --rate` against `mock`, kills it with SIGKILL `seconds` after it began sending
    /// (a row marked in its `sent-rows`), and returns the moment of the kill in Unix milliseconds.
    static func sendKilled(_ rig: Rig, _ mock: MockServerProcess, out: String, after seconds: Double,
                           extra: [String]) throws -> Int64 {
        let previousRun = SendResumeTests.sentRows(out).run
        let process = try Binary.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out) + extra)
        defer { process.stop(signal: SIGKILL) }
        let deadline = Date().addingTimeInterval(TestTime.seconds(30))
        while process.isRunning && Date() < deadline && !(SendResumeTests.sentRows(out).run > previousRun && SendResumeTests.sentRows(out).anySent) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        Thread.sleep(forTimeInterval: seconds)
        let killedAt = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(process.isRunning, "the run was still sending when killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return killedAt
    }

    /// A campaign paced at 4,000 rows/s (2.5 s), killed `seconds` after it began sending while both
    /// cores are busy, then resumed (with `resume`'s flags) to the end.
    static func killAndResume(after seconds: Double, seed: Int, resume: [String] = ["--resume"]) throws -> Kill {
        let rows = 10_000
        let rig = try Rig(rows: rows, seed: seed)
        let mock = try rig.mock(["--latency-ms", "5"])
        let out = rig.scratch.path("out")
        let pace = ["--rate", "4000"]
        let killedAt = try withBothCoresBusy { try sendKilled(rig, mock, out: out, after: seconds, extra: pace) }
        let resumed = try SendResumeTests.send(rig, mock, input: rig.csv, out: out, pace + resume)
        mock.stop()
        let requests = try mock.records()
        let sentTwice = requests.count - Set(requests.map { $0["device_token"] as? String ?? "" }).count
        let recent = requests.filter { request in
            let time = request["time_ms"] as? Int64 ?? Int64(request["time_ms"] as? Int ?? 0)
            return time > killedAt - 500 && time <= killedAt
        }.count
        try #require(resumed.result.status == 0 || resumed.result.status == 3, "\(resumed.result.stderr)")
        try resumed.checkEveryRowExactlyOnce(rows: rows)
        return Kill(sentTwice: sentTwice, answeredInLastHalfSecond: recent, resumed: resumed, rig: rig)
    }

    @Test(arguments: [0.5, 0.75, 1.0, 1.25])
    func aKillUnderLoadResendsOnlyTheLastMomentsAnswersAndCountsThemExactly(after seconds: Double) throws {
        let kill = try Self.killAndResume(after: seconds, seed: 40 + Int(seconds * 4))
        let context = "killed \(seconds) s in: \(kill.resumed.result.stderr)"
        #expect(kill.resumed.result.status == 0, "\(context)")
        #expect(kill.answeredInLastHalfSecond > 0, "the kill came mid-run; \(context)")
        #expect(kill.sentTwice <= kill.answeredInLastHalfSecond,
                "sent twice \(kill.sentTwice), answered in the last 0.5 s \(kill.answeredInLastHalfSecond); \(context)")
        let resent = try kill.resumed.summary["resent_after_crash"] as? Int ?? -1
        #expect(Self.countMatches(resent, received: kill.sentTwice, kills: 1),
                "resent_after_crash \(resent), the mock received \(kill.sentTwice) again; \(context)")
        #expect(kill.resumed.result.stdout.contains("\(resent) rows whose answers a crash lost were sent again"),
                "\(kill.resumed.result.stdout)")
    }

    @Test func noResendLostRecordsTheLostRowsGaveUpAndNoLaterResumeSendsThem() throws {
        let rows = 10_000
        let rig = try Rig(rows: rows, seed: 50)
        let mock = try rig.mock(["--latency-ms", "5"])
        let out = rig.scratch.path("out")
        let pace = ["--rate", "4000"]
        _ = try Self.withBothCoresBusy { try Self.sendKilled(rig, mock, out: out, after: 0.6, extra: pace) }
        // The resume that withholds the lost rows is itself killed, maybe before it logged them;
        // a plain --resume after it still never sends them.
        _ = try Self.withBothCoresBusy {
            try Self.sendKilled(rig, mock, out: out, after: 0.4, extra: pace + ["--resume", "--no-resend-lost"])
        }
        let run = try SendResumeTests.send(rig, mock, input: rig.csv, out: out, pace + ["--resume"])
        mock.stop()
        #expect(run.result.status == 3, "some rows gave up: \(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        let summary = try run.summary
        let withheld = try run.records.filter { $0["reason"] as? String == "LostInCrash" }
        #expect(!withheld.isEmpty, "rows were in flight at the first kill")
        #expect(withheld.allSatisfy { $0["outcome"] as? String == "gave_up" && $0["status"] as? Int == 0 })
        #expect(summary["gave_up"] as? Int == withheld.count)
        #expect((summary["by_reason"] as? [String: Int])?["LostInCrash"] == withheld.count)
        var received: [String: Int] = [:]
        for request in try mock.records() { received[request["device_token"] as? String ?? "", default: 0] += 1 }
        #expect(withheld.allSatisfy { received[$0["device_token"] as? String ?? "", default: 0] <= 1 },
                "sent before the crash, never again")
        // The second kill's lost rows were sent again by the plain --resume, and counted.
        let again = received.values.reduce(0) { $0 + $1 - 1 }
        let resent = summary["resent_after_crash"] as? Int ?? -1
        #expect(Self.countMatches(resent, received: again, kills: 1), "resent_after_crash \(resent), received again \(again)")
        #expect(run.result.stdout.contains("\(withheld.count) rows whose answers a crash lost were not sent again"),
                "\(run.result.stdout)")
    }

    @Test func noResendLostWithoutResumeIsAUsageError() throws {
        let rig = try Rig(rows: 10, seed: 51)
        let mock = try rig.mock()
        let run = try rig.send(mock, ["--no-resend-lost"])
        mock.stop()
        #expect(run.result.status == 1)
        #expect(run.result.stderr.contains("--no-resend-lost without --resume"), "\(run.result.stderr)")
        #expect(try mock.records().isEmpty, "nothing sent")
    }
}
