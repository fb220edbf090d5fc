import Foundation
import Testing
import TestSupport

@Suite struct ReportCommandTests {
    func line(_ row: Int, _ token: String, _ outcome: String, status: Int, reason: String?, at: Int64?) -> String {
        let reasonText = reason.map { "\"\($0)\"" } ?? "null"
        let atText = at.map(String.init) ?? "null"
        return #"{"row":\#(row),"device_token":"\#(token)","outcome":"\#(outcome)","status":\#(status),"reason":\#(reasonText),"apns_id":null,"attempts":1,"unregistered_at":\#(atText),"latency_ms":1.5,"endpoint":"127.0.0.1:1"}"#
            + "\n"
    }

    /// A log of two zstd frames made with the zstd CLI, optionally cut in the middle of the second.
    func writeLog(_ directory: TemporaryDirectory, _ name: String, frames: [String], cutLast: Bool) throws -> String {
        var bytes = Data()
        for (index, text) in frames.enumerated() {
            let plain = try directory.write("\(name).\(index)", text)
            var frame = try Data(contentsOf: URL(fileURLWithPath: try ZstdCLI.compress(plain)))
            if cutLast && index == frames.count - 1 { frame = frame.prefix(frame.count / 2) }
            bytes += frame
        }
        let path = directory.path(name)
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func reportMergesCountsAndDeadTokensOverTwoLogs() throws {
        let directory = try TemporaryDirectory()

        let first = try writeLog(directory, "a.jsonl.zst", frames: [
            line(1, "aaa", "delivered", status: 200, reason: nil, at: nil)
                + line(2, "bbb", "unregistered", status: 410, reason: "Unregistered", at: 1_795_426_299_123)
                + line(3, "ccc", "bad_token", status: 400, reason: "BadDeviceToken", at: nil),
            line(4, "ddd", "gave_up", status: 503, reason: "ServiceUnavailable", at: nil),
        ], cutLast: false)
        var lost = ""
        for row in 100..<400 { lost += line(row, "lost\(row)", "delivered", status: 200, reason: nil, at: nil) }
        let second = try writeLog(directory, "b.jsonl.zst", frames: [
            line(1, "bbb", "unregistered", status: 410, reason: "ExpiredToken", at: 1_795_426_399_000)
                + line(2, "eee", "rejected", status: 0, reason: "BadDeviceToken", at: nil)
                + line(3, "ccc", "bad_token", status: 400, reason: "DeviceTokenNotForTopic", at: nil),
            lost,
        ], cutLast: true)
        let dead = directory.path("dead.csv")

        let text = try Binary.run(["report", first, second, "--dead-tokens", dead])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("total: rows 7 delivered 1 unregistered 2 bad_token 2 failed 0 rejected 1 gave_up 1 aborted 0"))
        #expect(text.stderr.contains("b.jsonl.zst"))
        #expect(text.stderr.contains("skipped"))

        let deadText = String(decoding: try Data(contentsOf: URL(fileURLWithPath: dead)), as: UTF8.self)
        #expect(deadText == """
            device_token,reason,status,unregistered_at,row
            bbb,ExpiredToken,410,2026-11-23T09:33:19.000Z,1
            ccc,DeviceTokenNotForTopic,400,,3

            """)

        let json = try Binary.run(["report", first, second, "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let total = try #require(object["total"] as? [String: Int])
        #expect(total["rows"] == 7)
        #expect(total["unregistered"] == 2)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files.first?["rows"] as? Int == 4)
        #expect(files.first?["skipped_bytes"] as? Int == 0)
        #expect((files.last?["skipped_bytes"] as? Int ?? 0) > 0)
        #expect(object["dead_tokens"] as? Int == 2)
    }

    @Test func reportCountsTheCompleteLinesOfACutLastFrameAsZstdDecodesThem() throws {
        let directory = try TemporaryDirectory()
        var big = ""
        for row in 4...7_800 {
            big += row % 10 == 0 ? line(row, "dead\(row)", "unregistered", status: 410, reason: "Unregistered", at: 1_795_426_299_000)
                                 : line(row, "tok\(row)", "delivered", status: 200, reason: nil, at: nil)
        }
        let first = line(1, "aaa", "delivered", status: 200, reason: nil, at: nil)
            + line(2, "bbb", "failed", status: 400, reason: "BadTopic", at: nil)
            + line(3, "ccc", "delivered", status: 200, reason: nil, at: nil)
        let whole = try writeLog(directory, "whole.jsonl.zst", frames: [first, big], cutLast: false)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let firstFrame = try writeLog(directory, "first.jsonl.zst", frames: [first], cutLast: false)
        let firstSize = try Data(contentsOf: URL(fileURLWithPath: firstFrame)).count
        let cut = directory.path("cut.jsonl.zst")
        try bytes.prefix(firstSize + (bytes.count - firstSize) * 7 / 10).write(to: URL(fileURLWithPath: cut))

        // What the zstd tool still decodes: its complete lines are the records a user can see.
        let decoded = try ZstdCLI.decode(cut)
        #expect(decoded.status != 0, "the file is cut")
        let lines = decoded.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let completeLines = lines.count - 1
        let incomplete = lines.last?.utf8.count ?? 0
        #expect(completeLines > 3 && completeLines < 7_800)

        let text = try Binary.run(["report", cut])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("total: rows \(completeLines) "), "\(text.stdout) vs \(completeLines) lines")
        #expect(text.stderr.contains("skipped \(incomplete) bytes of an incomplete line"), "\(text.stderr)")
        #expect(text.stderr.contains("counted the \(completeLines - 3) complete records"), "\(text.stderr)")

        let json = try Binary.run(["report", cut, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let file = try #require((object["files"] as? [[String: Any]])?.first)
        #expect(file["rows"] as? Int == completeLines)
        #expect(file["cut_frame_records"] as? Int == completeLines - 3)
        #expect(file["incomplete_line_bytes"] as? Int == incomplete)
    }

    @Test func reportOnAMissingFileIsStatusOne() throws {
        let result = try Binary.run(["report", "/nonexistent/results.jsonl.zst"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/results.jsonl.zst"))
    }

    /// Shards' logs never share a row number: one met twice (the same log given twice, shards of
    /// another N or campaign) is a warning naming the row and the log, and a count in --json.
    @Test func aRowNumberInTwoLogsIsWarnedAboutAndCounted() throws {
        let directory = try TemporaryDirectory()
        let shard0 = try writeLog(directory, "shard-0.jsonl.zst", frames: [
            line(1, "aaa", "delivered", status: 200, reason: nil, at: nil) + line(4, "ddd", "delivered", status: 200, reason: nil, at: nil),
        ], cutLast: false)
        let shard1 = try writeLog(directory, "shard-1.jsonl.zst", frames: [
            line(2, "bbb", "unregistered", status: 410, reason: "Unregistered", at: 1_795_426_299_123)
                + line(3, "ccc", "delivered", status: 200, reason: nil, at: nil),
        ], cutLast: false)

        let clean = try Binary.run(["report", shard0, shard1])
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")
        #expect(clean.stdout.contains("total: rows 4 delivered 3 unregistered 1 "))

        let twice = try Binary.run(["report", shard0, shard1, shard0])
        #expect(twice.status == 0)
        #expect(twice.stderr.contains("warning: 2 records are for a row number already met"), "\(twice.stderr)")
        #expect(twice.stderr.contains("row 1 again in \(shard0)"), "\(twice.stderr)")
        #expect(twice.stdout.contains("repeated rows: 2 "))
        let json = try Binary.run(["report", shard0, shard1, shard0, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["repeated_rows"] as? Int == 2)
        #expect((try #require(object["total"] as? [String: Int]))["rows"] == 6, "every record is still counted")
    }
}
