import Foundation
import Testing
import TestSupport

/// `send --shard K/N` as an operator meets it: bad values stop before anything is sent, a shard's
/// campaign resumes only as that shard (and only its own rows), the job-file key, and the run's
/// identity in summary.json.
@Suite(.serialized) struct SendShardTests {
    typealias Rig = SendCampaignTests.Rig

    @Test func aBadShardValueStopsBeforeAnythingIsSentNamingTheFlagAndTheFix() throws {
        let rig = try Rig(rows: 20)
        let mock = try rig.mock()
        defer { mock.stop() }
        for (value, hint) in [("3/3", "K must be in 0...2"), ("0/0", "N must be at least 1"), ("1of3", "give K/N"),
                              ("-1/3", "K must be in 0...2")] {
            let run = try rig.send(mock, ["--shard", value])
            #expect(run.result.status == 1, "--shard \(value)")
            #expect(run.result.stderr.contains("--shard \(value): \(hint)"), "\(run.result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: run.outDirectory), "nothing written for --shard \(value)")
        }
        mock.stop()
        #expect(try mock.records().isEmpty, "nothing was sent")
    }

    /// A shard killed mid-run resumes its own rows: its log ends with each of its rows once, and
    /// no row of another shard; resuming it as another shard, or unsharded, is refused.
    @Test func aKilledShardResumesOnlyAsThatShardAndEndsWithEachOfItsRowsOnce() throws {
        let rows = 12_000
        let rig = try Rig(rows: rows, invalidRate: 0.01, unregisteredRate: 0.02, seed: 5)
        // 100 streams at 20 ms: a shard's ~6,000 rows take over a second, the kill lands mid-run.
        let mock = try rig.mock(["--latency-ms", "20"])
        defer { mock.stop() }
        let out = rig.scratch.path("out-shard-1")
        try SendResumeTests.sendKilled(rig, mock, input: rig.csv, out: out, after: 0.15, extra: ["--shard", "1/2"])
        #expect(!FileManager.default.fileExists(atPath: out + "/summary.json"), "killed before the end")
        #expect(try SendResumeTests.campaignRecord(out)["shard"] as? String == "1/2")

        let before = SendResumeTests.snapshot(out)
        for (extra, said) in [(["--shard", "0/2"], "gives --shard 0/2"), ([], "gives no --shard"),
                              (["--shard", "1/3"], "gives --shard 1/3")] {
            let refused = try SendResumeTests.send(rig, mock, input: rig.csv, out: out, ["--resume"] + extra)
            #expect(refused.result.status == 1)
            #expect(refused.result.stderr.contains("is shard 1/2 (--shard 1/2), and this run \(said)"), "\(refused.result.stderr)")
            #expect(SendResumeTests.snapshot(out) == before, "a refused resume leaves the campaign as it was")
        }

        let resumed = try SendResumeTests.send(rig, mock, input: rig.csv, out: out, ["--resume", "--shard", "1/2"])
        #expect(resumed.result.status == 0, "\(resumed.result.stderr)")
        let other = try SendResumeTests.send(rig, mock, input: rig.csv, out: rig.scratch.path("out-shard-0"), ["--shard", "0/2"])
        #expect(other.result.status == 0, "\(other.result.stderr)")
        var seen = Set<Int>()
        for run in [resumed, other] {
            let records = try run.records
            let summary = try run.summary
            #expect(summary["rows"] as? Int == records.count)
            #expect(CampaignRun.outcomes.reduce(0) { $0 + (summary[$1] as? Int ?? 0) } == records.count)
            for record in records { #expect(seen.insert(record["row"] as? Int ?? 0).inserted, "a row in one log, once") }
        }
        #expect(seen == Set(1...rows), "the two shards' logs hold every row once")
        let summary = try resumed.summary
        let resent = summary["resent_after_crash"] as? Int ?? -1
        // At most what the kill can have left in flight (2 connections x 50 streams) and the
        // mark's step and reader's queue, all of them this shard's rows, not the other shard's.
        #expect(resent >= 0 && resent <= summary["rows"] as? Int ?? 0, "a shard counts only its own rows as resent: \(resent)")

        // A shard's resume knows its rows even under --no-prescan: finished, nothing more counted.
        let again = try SendResumeTests.send(rig, mock, input: rig.csv, out: out, ["--resume", "--shard", "1/2", "--no-prescan"])
        #expect(again.result.status == 0 && again.result.stdout.contains("already finished"), "\(again.result.stdout)")
        #expect(try again.summary["resent_after_crash"] as? Int == resent)
    }

    @Test func summaryJsonSaysWhenWhatInputWhichShardAndWhichVersion() throws {
        let rig = try Rig(rows: 300)
        let mock = try rig.mock()
        defer { mock.stop() }
        let jobFile = try rig.scratch.write("job.toml", "shard = \"2/3\"\n")
        let sharded = try rig.send(mock, ["--config", jobFile])
        let whole = try rig.send(mock)
        #expect(sharded.result.status == 0 && whole.result.status == 0, "\(sharded.result.stderr) \(whole.result.stderr)")
        let version = try Binary.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (run, shard) in [(sharded, "2/3" as String?), (whole, nil)] {
            let summary = try run.summary
            #expect(summary["shard"] as? String == shard)
            #expect(summary.keys.contains("shard"), "null, not left out, when unsharded")
            #expect(summary["input"] as? String == rig.csv)
            #expect(summary["apns_bulk_version"] as? String == version)
            let fingerprint = try #require(summary["fingerprint"] as? [String: Any])
            let recorded = try #require(try SendResumeTests.campaignRecord(run.outDirectory)["fingerprint"] as? [String: Any])
            #expect(fingerprint["size"] as? Int == recorded["size"] as? Int)
            #expect(fingerprint["sample_sha256"] as? String == recorded["sample_sha256"] as? String)
            let started = try #require((summary["started_at"] as? String).flatMap { formatter.date(from: $0) })
            let finished = try #require((summary["finished_at"] as? String).flatMap { formatter.date(from: $0) })
            // Clock: the wall clock against the summary's UTC stamps; slack: 2 minutes (a sanity check of the stamp).
            #expect(started <= finished && abs(started.timeIntervalSinceNow) < 120)
            #expect((summary["started_at"] as? String)?.hasSuffix("Z") == true, "UTC")
        }
        #expect(try sharded.summary["rows"] as? Int ?? 0 < 300, "a shard's rows, not the campaign's")
    }

    /// Under --no-prescan a line that cannot be read ends every shard's reading there; the row at
    /// it (no token to hash) is recorded by one shard only, so the logs still hold each row once.
    @Test func theUnreadableRowOfAStreamedCampaignIsInOneShardsLog() throws {
        let rig = try Rig(rows: 3_000)
        var lines = try String(contentsOfFile: rig.csv, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        lines[2_000] = #"zz"x,{}"#
        let input = try rig.scratch.write("bad-late.csv", lines.joined(separator: "\n"))
        let mock = try rig.mock()
        defer { mock.stop() }
        var rows: [Int] = []
        for index in 0..<3 {
            let run = try rig.send(mock, ["--no-prescan", "--shard", "\(index)/3"], input: input)
            #expect(run.result.status == 2, "\(run.result.stderr)")
            #expect(try run.summary["input_stopped_at_line"] as? Int == 2_001)
            rows += try run.records.compactMap { $0["row"] as? Int }
            let summary = try run.summary
            #expect(CampaignRun.outcomes.reduce(0) { $0 + (summary[$1] as? Int ?? 0) } == summary["rows"] as? Int)
        }
        #expect(rows.sorted() == Array(1...2_000), "rows 1...1,999 sent, row 2,000 aborted, each in one log")
    }
}
