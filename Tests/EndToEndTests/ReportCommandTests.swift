import Foundation
import Testing

@Suite struct ReportCommandTests {
    func line(_ row: Int, _ token: String, _ outcome: String, status: Int, reason: String?, at: Int64?) -> String {
        let reasonText = reason.map { "\"\($0)\"" } ?? "null"
        let atText = at.map(String.init) ?? "null"
        return #"{"row":\#(row),"device_token":"\#(token)","outcome":"\#(outcome)","status":\#(status),"reason":\#(reasonText),"apns_id":null,"attempts":1,"unregistered_at":\#(atText),"latency_ms":1.5,"endpoint":"127.0.0.1:1"}"#
            + "\n"
    }

    /// A log of two zstd frames made with the zstd CLI, optionally cut in the middle of the second.
    func writeLog(_ directory: URL, _ name: String, frames: [String], cutLast: Bool) throws -> String {
        var bytes = Data()
        for (index, text) in frames.enumerated() {
            let plain = directory.appendingPathComponent("\(name).\(index)")
            try Data(text.utf8).write(to: plain)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["zstd", "-q", "-f", plain.path, "-o", plain.path + ".zst"]
            try process.run()
            process.waitUntilExit()
            var frame = try Data(contentsOf: URL(fileURLWithPath: plain.path + ".zst"))
            if cutLast && index == frames.count - 1 { frame = frame.prefix(frame.count / 2) }
            bytes += frame
        }
        let path = directory.appendingPathComponent(name).path
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func reportMergesCountsAndDeadTokensOverTwoLogs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

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
        let dead = directory.appendingPathComponent("dead.csv").path

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

    @Test func reportOnAMissingFileIsStatusOne() throws {
        let result = try Binary.run(["report", "/nonexistent/results.jsonl.zst"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/results.jsonl.zst"))
    }
}
