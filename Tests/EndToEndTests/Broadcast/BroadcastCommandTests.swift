import Foundation
import Testing
import TestSupport

/// `apns-bulk broadcast` through the built binary against the mock over TLS on 127.0.0.1: the
/// outcomes, files and exit statuses an operator sees.
@Suite struct BroadcastCommandTests {
    typealias Rig = BroadcastRig

    @Test func updatesAreDeliveredAndRecordedUnderTheBroadcastsNames() throws {
        let rig = try Rig()
        let requestID = "123e4567-e89b-12d3-a456-426614174000"
        let input = try rig.csv("u.csv", ["\(Rig.channel(1)),\(Rig.update(1)),,,",
                                          "\(Rig.channel(1)),\(Rig.update(2)),5,,\(requestID)",
                                          "\(Rig.channel(2)),\(Rig.update(3)),1,,"])
        let record = rig.scratch.path("record.jsonl.zst")
        let run = try rig.broadcast(input, out: "out", ["--mock-option", "record-out=\(record)"])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 3)
        #expect(try run.summary["delivered"] as? Int == 3)
        let records = try run.recordsByRow
        #expect(records[1]?["channel_id"] as? String == Rig.channel(1), "\(records)")
        #expect(records[1]?["device_token"] == nil && records[1]?["apns_id"] == nil, "a broadcast's names only: \(records)")
        #expect(records[2]?["apns_request_id"] as? String == requestID, "the row's request id, echoed: \(records)")
        #expect((records[1]?["apns_request_id"] as? String)?.count == 36, "APNs made one: \(records)")
        #expect(records[3]?["outcome"] as? String == "delivered" && records[3]?["status"] as? Int == 200)
        #expect(records[3]?["attempts"] as? Int == 1 && records[3]?["latency_ms"] is Double)
        #expect(try run.deadChannels.isEmpty)
        for file in ["results.jsonl.zst", "summary.json", "report.html", "dead-channels.csv"] {
            #expect(FileManager.default.fileExists(atPath: run.outDirectory + "/" + file), "\(file)")
        }
        #expect(!FileManager.default.fileExists(atPath: run.outDirectory + "/dead-tokens.csv"))
        #expect(run.result.stdout.contains("dead channels: \(run.outDirectory)/dead-channels.csv"), "\(run.result.stdout)")
        // Several rows of one channel are its successive updates: each sent, none a duplicate.
        let received = try ZstdCLI.jsonLines(record).filter { $0["kind"] as? String == "broadcast" }
        #expect(received.count == 3, "\(received)")
        #expect(received.allSatisfy { $0["bundle_id"] as? String == MockServerProcess.topic && $0["status"] as? Int == 200 })
        #expect(received.filter { $0["channel_id"] as? String == Rig.channel(1) }.count == 2)
    }

    @Test func eachBadRowIsRejectedWithItsReasonAndNeverSent() throws {
        let rig = try Rig()
        let good = Rig.channel(7)
        let start = Rig.csvField(#"{"aps":{"event":"start","timestamp":1,"attributes-type":"A","attributes":{},"alert":"x"}}"#)
        let rows: [(String, String)] = [
            ("\(good),\(Rig.update(1)),,,", "delivered"),
            (",\(Rig.update(1)),,,", "MissingChannelId"),
            ("not base64!,\(Rig.update(1)),,,", "BadChannelId"),
            ("\(good),\(Rig.update(1)),7,,", "BadPriority"),
            ("\(good),\(Rig.update(1)),,-5,", "BadExpirationDate"),
            ("\(good),\(Rig.update(1)),,,not-a-uuid", "BadMessageId"),
            ("\(good),\(Rig.update(1)),,,123E4567-E89B-12D3-A456-426614174000", "BadMessageId"),
            ("\(good),,,,", "PayloadEmpty"),
            ("\(good),\(Rig.csvField("[1,2]")),,,", "InvalidPayload"),
            ("\(good),\(Rig.csvField(#"{"aps":"#)),,,", "InvalidPayload"),
            ("\(good),\(start),,,", "InvalidPayload"),
            ("\(good),\(Rig.csvField(#"{"aps":{"event":"update","timestamp":1,"pad":""# + String(repeating: "x", count: 5_100) + #""}}"#)),,,",
             "PayloadTooLarge"),
            ("\(good),\(Rig.csvField(#"{"aps":{"event":"update","timestamp":1,"pad":""# + String(repeating: "x", count: 5_000) + #""}}"#)),,,",
             "delivered"),
        ]
        let input = try rig.csv("bad.csv", rows.map(\.0))
        let record = rig.scratch.path("record.jsonl.zst")
        let run = try rig.broadcast(input, out: "out", ["--mock-option", "record-out=\(record)"])
        #expect(run.result.status == 0, "rejected rows are campaign outcomes: \(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows.count)
        let records = try run.recordsByRow
        for (index, (_, expected)) in rows.enumerated() {
            let found = records[index + 1]
            if expected == "delivered" {
                #expect(found?["outcome"] as? String == "delivered", "row \(index + 1): \(String(describing: found))")
            } else {
                #expect(found?["outcome"] as? String == "rejected" && found?["reason"] as? String == expected
                        && found?["status"] as? Int == 0 && found?["attempts"] as? Int == 0,
                        "row \(index + 1) \(expected): \(String(describing: found))")
            }
        }
        #expect(run.result.stderr.contains("row 11 is rejected InvalidPayload: a broadcast cannot start"), "\(run.result.stderr)")
        let sent = try ZstdCLI.jsonLines(record).filter { $0["kind"] as? String == "broadcast" }
        #expect(sent.count == 2, "only the good rows reach APNs: \(sent)")
    }

    @Test func aFileWithoutAChannelColumnStopsBeforeAnythingIsSent() throws {
        let rig = try Rig()
        let input = try rig.csv("tokens.csv", header: "device_token,payload", ["\(String(repeating: "a", count: 64)),\(Rig.update(1))"])
        let run = try rig.broadcast(input, out: "out")
        #expect(run.result.status == 1)
        #expect(run.result.stderr.contains(input) && run.result.stderr.contains("no channel_id column")
                && run.result.stderr.contains("channel_id,payload"), "names the file and the fix: \(run.result.stderr)")
        #expect(run.result.stderr.split(separator: "\n").count == 1, "\(run.result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: run.outDirectory + "/results.jsonl.zst"))

        let noPayload = try rig.csv("nopayload.csv", header: "channel_id", [Rig.channel(1)])
        let second = try rig.broadcast(noPayload, out: "out2")
        #expect(second.result.status == 1 && second.result.stderr.contains("no payload column"), "\(second.result.stderr)")
    }

    @Test func badFlagsAreRefusedWithExitOne() throws {
        let rig = try Rig()
        let input = try rig.csv("u.csv", ["\(Rig.channel(1)),\(Rig.update(1)),,,"])
        for (flags, says) in [(["--priority", "7"], "--priority 7"), (["--expiration", "-1"], "--expiration -1"),
                              (["--bundle-id", "com.example.app.push-type.liveactivity"], "without its push type"),
                              // The flags send shares (RetryFlags, ConnectionFlags, MetricsFlags), checked by broadcast's setup.
                              (["--max-attempts", "0"], "--max-attempts 0"), (["--max-streams", "0"], "--max-streams 0"),
                              (["--retry-base-ms", "900", "--retry-max-ms", "800"], "--retry-max-ms 800"),
                              (["--metrics-interval", "0"], "--metrics-interval 0"),
                              (["--pushgateway", "https://gw.example:9091"], "--pushgateway"),
                              // A job file is send's: broadcast refuses it as an unknown option.
                              (["--config", rig.scratch.path("job.toml")], "--config")] {
            let run = try rig.broadcast(input, out: "out-\(flags[0])", flags)
            #expect(run.result.status == 1 && run.result.stderr.contains(says), "\(flags): \(run.result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: run.outDirectory), "\(flags): nothing written, nothing sent")
        }
    }

    /// `report` reads a broadcast's log: its summary, merged list and page name dead channels.
    @Test func reportCountsABroadcastsDeadChannels() throws {
        let rig = try Rig()
        let gone = Rig.channel(9)
        let respond = try rig.scratch.write("respond.csv", "\(gone),400,ChannelNotRegistered\n")
        let input = try rig.csv("u.csv", ["\(Rig.channel(1)),\(Rig.update(1)),,,", "\(gone),\(Rig.update(2)),,,",
                                          "\(gone),\(Rig.update(3)),,,"])
        let run = try rig.broadcast(input, out: "out", ["--mock-option", "respond-file=\(respond)"])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 3)
        // Lines come in the order the answers did: rows 2 and 3 are in flight together.
        #expect(try run.deadChannels.map { [$0[0], $0[1], $0[2], $0[3]] }.sorted { $0[3] < $1[3] }
                == [[gone, "ChannelNotRegistered", "400", "2"], [gone, "ChannelNotRegistered", "400", "3"]])
        let page = try String(contentsOfFile: run.outDirectory + "/report.html", encoding: .utf8)
        #expect(page.contains("Dead channels") && page.contains("data-count=\"2\"") && !page.contains("Dead tokens"),
                "the run's page names channels")

        let merged = rig.scratch.path("merged.csv")
        let human = try Binary.run(["report", run.outDirectory, "--dead-tokens", merged])
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.contains("rows 3 delivered 1") && human.stdout.contains("dead channels: 1"), "\(human.stdout)")
        // One line per channel: the later answer's, row 2 or 3 as the two answers came.
        let mergedText = try String(contentsOfFile: merged, encoding: .utf8)
        #expect(["2", "3"].map { "channel_id,reason,status,row\n\(gone),ChannelNotRegistered,400,\($0)\n" }.contains(mergedText),
                "one line per channel: \(mergedText)")
        let json = try Binary.run(["report", run.outDirectory, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["dead_channels"] as? Int == 1 && object?["dead_tokens"] == nil, "\(json.stdout)")
        let html = rig.scratch.path("page.html")
        #expect(try Binary.run(["report", run.outDirectory, "--html", html]).status == 0)
        #expect(try String(contentsOfFile: html, encoding: .utf8).contains("Dead channels"))
    }

    @Test func aDryRunChecksEveryRowAndSendsNothing() throws {
        let rig = try Rig()
        let input = try rig.csv("u.csv", ["\(Rig.channel(1)),\(Rig.update(1)),,,", ",\(Rig.update(2)),,,"])
        let run = try rig.broadcast(input, out: "out", ["--dry-run"])
        #expect(run.result.status == 0, "\(run.result.stderr)")
        let summary = try run.summary
        #expect(summary["would_send"] as? Int == 1, "\(summary)")
        #expect(try run.records.map { $0["reason"] as? String } == ["MissingChannelId"])
        #expect(try run.records.first?["channel_id"] as? String == "")
    }

    /// As `send` does (SendStreamTests): a signal before a stream gives its header row ends the run
    /// with exit 2 and says nothing was sent; not the command-line mistake's exit 1.
    @Test func aSignalWhileAPipeHasNotGivenItsHeaderExitsTwo() throws {
        let rig = try Rig()
        let fifo = rig.scratch.path("updates.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let out = rig.scratch.path("out-pipe")
        let process = try SendStreamTests.start(["broadcast", "--input", fifo, "--bundle-id", MockServerProcess.topic,
                                                 "--out", out, "--progress", "never", "--endpoint", "mock"] + rig.token,
                                                out: out)
        // Clock: none; the event itself (the run opens the pipe once its signal handlers are in place).
        try #require(SendStreamTests.waitUntilOpen(fifo, by: process), "the run never opened \(fifo)")
        kill(process.processIdentifier, SIGTERM)
        #expect(SendStreamTests.finish(process, within: 10), "still running after SIGTERM")
        let stderr = SendStreamTests.stderr(out)
        #expect(process.terminationStatus == 2, "\(stderr)")
        #expect(stderr.contains("interrupted while waiting for \(fifo)") && stderr.contains("nothing was sent"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"))
    }
}
