import Foundation
import Testing
import TestSupport

/// Issue 14 item 6: a device token repeated in a campaign (any case, same topic) is delivered once;
/// the later rows are `rejected` `DuplicateToken` with `duplicate_of` naming the first row.
@Suite(.serialized) struct SendDuplicatesTests {
    typealias Rig = SendCampaignTests.Rig
    static let otherTopic = "com.example.other"

    /// Row 1 the token, 2 another token, 3 the token in upper case, 4 the token with another
    /// topic, 5 the token quoted with spaces around, 6 the other token again.
    static func csv(_ rig: Rig) throws -> (path: String, token: String) {
        let token = String(repeating: "a1", count: 32), second = String(repeating: "9c", count: 32)
        let text = """
            device_token,topic,payload
            \(token),,"{""n"":1}"
            \(second),,"{""n"":2}"
            \(token.uppercased()),,"{""n"":3}"
            \(token),\(otherTopic),"{""n"":4}"
            "\(token)" ,\(MockServerProcess.topic),"{""n"":5}"
            \(second),,"{""n"":6}"

            """
        return (try rig.scratch.write("dups.csv", text), token)
    }

    static func delivered(_ mock: MockServerProcess) throws -> [String] {
        try mock.records().filter { $0["status"] as? Int == 200 }.compactMap { $0["device_token"] as? String }
    }

    @Test(arguments: [[String](), ["--no-prescan"]])
    func aTokenListedThreeTimesOnceInUpperCaseIsDeliveredOnceAndTheOthersNameTheFirstRow(_ extra: [String]) throws {
        let rig = try Rig(rows: 1)
        let (csv, token) = try Self.csv(rig)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--topic", Self.otherTopic])
        let out = rig.scratch.path("out")
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out) + extra)
        mock.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 6)
        let byRow = Dictionary(uniqueKeysWithValues: try run.records.map { ($0["row"] as? Int ?? 0, $0) })
        for row in [1, 2, 4] { #expect(byRow[row]?["outcome"] as? String == "delivered", "row \(row)") }
        for (row, first) in [(3, 1), (5, 1), (6, 2)] {
            #expect(byRow[row]?["outcome"] as? String == "rejected", "row \(row)")
            #expect(byRow[row]?["reason"] as? String == "DuplicateToken", "row \(row)")
            #expect(byRow[row]?["duplicate_of"] as? Int == first, "row \(row)")
        }
        #expect(byRow[1]?["duplicate_of"] == nil)
        // APNs saw the token once per topic.
        #expect(try Self.delivered(mock).filter { $0 == token }.count == 2)
        let reasons = try run.summary["by_reason"] as? [String: Int]
        #expect(reasons?["DuplicateToken"] == 3)
    }

    /// A file of 16 MiB or more is prescanned by two threads, one a half (`PrescanHalves`): a token
    /// of the first half copied into the second is a duplicate all the same.
    @Test func copiesAcrossTheHalvesOfALargeFileAreDuplicates() throws {
        let rig = try Rig(rows: 1)
        let padding = String(repeating: "x", count: 3900)
        let rows = 4400  // ~4 KiB each: over 16 MiB
        let lines = (0..<rows).map { index in
            let token = String(format: "%064x", index < rows / 2 || index % 40 != 0 ? index + 1 : index - rows / 2 + 1)
            return "\(token),,\"{\"\"aps\"\":{\"\"alert\"\":\"\"\(index) \(padding)\"\"}}\""
        }
        let csv = try rig.scratch.write("large.csv", "device_token,topic,payload\n" + lines.joined(separator: "\n") + "\n")
        #expect(try FileManager.default.attributesOfItem(atPath: csv)[.size] as? Int ?? 0 >= 16 << 20)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let out = rig.scratch.path("out")
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out))
        mock.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: rows)
        let copies = (rows / 2..<rows).filter { $0 % 40 == 0 }
        let byRow = Dictionary(uniqueKeysWithValues: try run.records.map { ($0["row"] as? Int ?? 0, $0) })
        for index in copies {
            #expect(byRow[index + 1]?["reason"] as? String == "DuplicateToken", "row \(index + 1)")
            #expect(byRow[index + 1]?["duplicate_of"] as? Int == index - rows / 2 + 1, "row \(index + 1)")
        }
        #expect((try run.summary["by_reason"] as? [String: Int])?["DuplicateToken"] == copies.count)
        #expect(try run.summary["delivered"] as? Int == rows - copies.count)
    }

    @Test func allowDuplicatesFromTheCommandLineOrAJobFileSendsEveryRow() throws {
        let rig = try Rig(rows: 1)
        let (csv, token) = try Self.csv(rig)
        let job = try rig.scratch.write("job.toml", "allow-duplicates = true\n")
        for (index, extra) in [["--allow-duplicates"], ["--config", job]].enumerated() {
            let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--topic", Self.otherTopic])
            let out = rig.scratch.path("out\(index)")
            let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out) + extra)
            mock.stop()
            #expect(result.status == 0, "\(result.stderr)")
            let run = CampaignRun(result: result, outDirectory: out)
            try run.checkEveryRowExactlyOnce(rows: 6)
            #expect(try run.records.allSatisfy { $0["outcome"] as? String == "delivered" && $0["duplicate_of"] == nil })
            #expect(try Self.delivered(mock).filter { $0.lowercased() == token }.count == 4)
        }
    }

    /// A crash is what it leaves: the log holds the records of the rows answered before it. Here
    /// a finished campaign's log is cut back to its first rows (as a kill leaves it), and the
    /// resume must still reject the later copies of a token recorded before the "crash".
    @Test func aDuplicateOfARowRecordedBeforeACrashIsStillADuplicateAfterResume() throws {
        let rig = try Rig(rows: 500)
        var text = try String(contentsOfFile: rig.csv, encoding: .utf8)
        let lines = text.split(separator: "\n")
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false)
        let tokenColumn = try #require(header.firstIndex(of: "device_token"))
        let firstRows = lines[1...3].map { String($0) }
        for line in firstRows {
            // The same row again with its token in upper case.
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[tokenColumn] = fields[tokenColumn].uppercased()
            text += fields.joined(separator: ",") + "\n"
        }
        let csv = try rig.scratch.write("crash.csv", text)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let out = rig.scratch.path("out")
        let first = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out))
        #expect(first.status == 0, "\(first.stderr)")
        // Keep only rows 1...50 in the log, as if the run had died after them.
        let log = out + "/results.jsonl.zst"
        let kept = try ZstdCLI.decode(log).stdout.split(separator: "\n")
            .filter { line in (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["row"] as? Int ?? 0 <= 50 }
        let plain = rig.scratch.path("kept.jsonl")
        try (kept.joined(separator: "\n") + "\n").write(toFile: plain, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: log)
        let compress = try Command.run("/usr/bin/zstd", ["-q", plain, "-o", log])
        try #require(compress.status == 0, "\(compress.stderr)")

        let resumed = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out)
                                     + ["--resume"])
        mock.stop()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let run = CampaignRun(result: resumed, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 503)
        let byRow = Dictionary(uniqueKeysWithValues: try run.records.map { ($0["row"] as? Int ?? 0, $0) })
        for (offset, _) in firstRows.enumerated() {
            let copy = byRow[501 + offset]
            // gen's own rows may be invalid; a copy of a rejected row is no duplicate.
            guard byRow[1 + offset]?["outcome"] as? String != "rejected" else { continue }
            #expect(copy?["reason"] as? String == "DuplicateToken", "row \(501 + offset)")
            #expect(copy?["duplicate_of"] as? Int == 1 + offset, "row \(501 + offset)")
        }
    }
}
