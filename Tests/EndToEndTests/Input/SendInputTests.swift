import Foundation
import Testing
import TestSupport

/// Bad input: a bad row becomes `rejected` with its reason and the run goes on; a bad file stops
/// the run before anything is sent (exit 1, a message naming the file and the problem).
@Suite(.serialized) struct SendInputTests {
    static let good = String(repeating: "ab", count: 32)
    static let payload = #"{"aps":{"alert":"hi"}}"#

    static func field(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" })
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    /// (device_token, payload, push_type, priority, topic, apns_id, collapse_id, expiration) → expected reason.
    static let badRows: [([String], String)] = [
        (["zz" + String(repeating: "ab", count: 31), payload, "", "", "", "", "", ""], "BadDeviceToken"),
        ([String(repeating: "a", count: 63), payload, "", "", "", "", "", ""], "BadDeviceToken"),
        (["", payload, "", "", "", "", "", ""], "BadDeviceToken"),
        ([String(repeating: "ab", count: 101), payload, "", "", "", "", "", ""], "BadDeviceToken"),
        ([good, "not json", "", "", "", "", "", ""], "InvalidPayload"),
        ([good, "[1,2,3]", "", "", "", "", "", ""], "InvalidPayload"),
        ([good, #"{"a":"# + "\"" + String(repeating: "x", count: 4089) + "\"}", "", "", "", "", "", ""], "PayloadTooLarge"),
        ([good, #"{"a":"# + "\"" + String(repeating: "x", count: 5113) + "\"}", "voip", "", "com.example.app.voip", "", "", ""], "PayloadTooLarge"),
        ([good, payload, "", "7", "", "", "", ""], "BadPriority"),
        ([good, payload, "shout", "", "", "", "", ""], "InvalidPushType"),
        ([good, #"{"aps":{"content-available":1}}"#, "background", "10", "", "", "", ""], "BadPriority"),
        ([good, payload, "", "", "", "not-a-uuid", "", ""], "BadMessageId"),
        ([good, payload, "", "", "", "", String(repeating: "c", count: 65), ""], "BadCollapseId"),
        ([good, payload, "voip", "", "com.example.app", "", "", ""], "BadTopic"),
        ([good, payload, "", "", "", "", "", "tomorrow"], "BadExpirationDate"),
        ([good, "", "", "", "", "", "", ""], "PayloadEmpty"),
    ]

    static let header = "device_token,payload,push_type,priority,topic,apns_id,collapse_id,expiration"

    @Test func everyKindOfBadRowIsRejectedWithItsReasonAndTheRunGoesOn() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        var lines = [Self.header]
        var expected: [Int: String] = [:]
        var row = 0
        for (fields, reason) in Self.badRows {
            row += 1
            lines.append(fields.map(Self.field).joined(separator: ","))
            expected[row] = reason
            row += 1
            lines.append([String(format: "%064x", row), Self.payload, "", "", "", "", "", ""].map(Self.field).joined(separator: ","))
        }
        row += 1
        lines.append([Self.good, Self.payload, "", ""].map(Self.field).joined(separator: ","))  // too few fields
        expected[row] = "FieldCountMismatch"
        row += 1
        lines.append([Self.good, "{\"a\":\"" + String(repeating: "y", count: 70_000) + "\"}", "", "", "", "", "", ""]
            .map(Self.field).joined(separator: ","))
        expected[row] = "FieldTooLarge"
        let input = try rig.scratch.write("bad-rows.csv", lines.joined(separator: "\n") + "\n")
        let mock = try rig.mock()
        let run = try rig.send(mock, input: input)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: row)
        let records = try run.records
        for record in records {
            let number = record["row"] as? Int ?? 0
            if let reason = expected[number] {
                #expect(record["outcome"] as? String == "rejected", "row \(number)")
                #expect(record["reason"] as? String == reason, "row \(number)")
                #expect(record["status"] as? Int == 0)
            } else {
                #expect(record["outcome"] as? String == "delivered", "row \(number): \(record)")
            }
        }
        #expect(expected.count >= 18)
    }

    /// Files that must stop the run before anything is sent.
    static let badFiles: [(name: String, content: [UInt8], message: String)] = [
        ("unbalanced.csv", Array("device_token,payload\n\(good),\"{\"\"a\"\":1}\n\(good),x\n".utf8), "quot"),
        ("no-token-column.csv", Array("token,payload\n\(good),{}\n".utf8), "device_token"),
        ("empty.csv", [], "empty"),
        ("junk.csv", (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }, "junk.csv"),
        ("no-payload.csv", Array("device_token\n\(good)\n".utf8), "payload"),
    ]

    @Test(arguments: 0..<badFiles.count)
    func aBadFileStopsBeforeAnythingIsSent(index: Int) throws {
        let (name, content, message) = Self.badFiles[index]
        let rig = try SendCampaignTests.Rig(rows: 1)
        let input = rig.scratch.path(name)
        _ = FileManager.default.createFile(atPath: input, contents: Data(content))
        let mock = try rig.mock()
        let run = try rig.send(mock, input: input)
        mock.stop()
        #expect(run.result.status == 1, "\(name): \(run.result.stderr)")
        #expect(run.result.stderr.lowercased().contains(message.lowercased()), "\(name): \(run.result.stderr)")
        #expect(run.result.stderr.contains(name), "the message names the file")
        #expect(!run.result.stderr.contains("Stack dump"))
        #expect(try (mock.stats()["requests"] as? Int ?? -1) == 0, "nothing was sent")
    }

    @Test func aMissingFileAndATruncatedZstdStopBeforeSending() throws {
        let rig = try SendCampaignTests.Rig(rows: 500)
        let zst = rig.scratch.path("campaign.csv.zst")
        let compress = try Command.run("/usr/bin/zstd", ["-q", "-f", rig.csv, "-o", zst])
        try #require(compress.status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: zst))
        let cut = rig.scratch.path("cut.csv.zst")
        _ = FileManager.default.createFile(atPath: cut, contents: data.prefix(data.count / 2))
        let mock = try rig.mock()
        let truncated = try rig.send(mock, input: cut)
        let missing = try rig.send(mock, input: rig.scratch.path("nowhere.csv"))
        let whole = try rig.send(mock, input: zst)
        mock.stop()
        #expect(truncated.result.status == 1)
        #expect(truncated.result.stderr.contains("cut.csv.zst"))
        #expect(missing.result.status == 1)
        #expect(missing.result.stderr.contains("nowhere.csv"))
        #expect(whole.result.status == 0, "\(whole.result.stderr)")
        try whole.checkEveryRowExactlyOnce(rows: 500)
    }

    @Test func aHeaderOnlyFileIsAnEmptyCampaign() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let input = try rig.scratch.write("header-only.csv", "device_token,payload\n")
        let mock = try rig.mock()
        let run = try rig.send(mock, input: input)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(try run.summary["rows"] as? Int == 0)
    }

    @Test func aFieldOverSixtyFourKiBInAColumnNotInUseRejectsItsRowAndTheRunGoesOn() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let notes = String(repeating: "n", count: 70_000)
        var lines = ["device_token,payload,notes"]
        for row in 1...6 {
            let token = String(format: "%064x", row)
            lines.append(row == 3 ? "\(token),\(Self.field(Self.payload)),\(notes)"
                         : row == 5 ? "\(token),\(Self.field(Self.payload)),x,\"\(notes)\""  // past the header's end
                         : "\(token),\(Self.field(Self.payload)),x")
        }
        let input = try rig.scratch.write("notes.csv", lines.joined(separator: "\n") + "\n")
        let mock = try rig.mock()
        let run = try rig.send(mock, input: input)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 6)
        for record in try run.records {
            let row = record["row"] as? Int ?? 0
            if row == 3 || row == 5 {
                #expect(record["outcome"] as? String == "rejected", "row \(row)")
                #expect(record["reason"] as? String == "FieldTooLarge", "row \(row)")
            } else {
                #expect(record["outcome"] as? String == "delivered", "row \(row): \(record)")
            }
        }
        #expect(try mock.stats()["requests"] as? Int == 4, "the two rejected rows were never sent")
    }

    @Test func runLevelFlagErrorsStopBeforeSending() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let mock = try rig.mock()
        let cases: [([String], String)] = [
            (["--push-type", "voip"], "--topic"),              // com.example.app lacks .voip
            (["--priority", "7"], "--priority"),
            (["--push-type", "background", "--priority", "10"], "priority 5"),
            (["--connections", "0"], "--connections"),
            (["--payload-file", rig.scratch.path("none.json")], "--payload-file"),
            (["--key-id", "short"], "short"),
        ]
        for (extra, message) in cases {
            let run = try rig.send(mock, extra)
            #expect(run.result.status == 1, "\(extra): \(run.result.stderr)")
            #expect(run.result.stderr.contains(message), "\(extra): \(run.result.stderr)")
        }
        mock.stop()
        #expect(try (mock.stats()["requests"] as? Int ?? -1) == 0)
    }
}
