import Foundation
import Testing
import TestSupport

/// Device-token Live Activity pushes (`--push-type liveactivity`, topic `<bundle>.push-type.liveactivity`)
/// through the built binary and its mock over TLS: starts, updates and ends are delivered; rows that
/// break ActivityKit's rules are rejected `InvalidPayload` before sending, the first of each rule
/// named on stderr with the rule.
@Suite(.serialized) struct LiveActivityCampaignTests {
    static let topic = MockServerProcess.topic + ".push-type.liveactivity"

    static func token(_ row: Int) -> String { String(repeating: "0", count: 60) + String(format: "%04x", row) }

    static let start = #"{"aps":{"timestamp":1700000000,"event":"start","content-state":{"score":"0-0"},"#
        + #""attributes-type":"MatchAttributes","attributes":{"home":"A","away":"B"},"#
        + #""alert":{"title":"Kick-off","body":"A v B"},"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}"#

    /// Each row: its payload, its own push type and topic (empty: the run's), and what becomes of it.
    static let rows: [(payload: String, pushType: String, topic: String, expected: Expected)] = [
        (start, "", "", .delivered),
        (#"{"aps":{"timestamp":1700000060,"event":"update","content-state":{"score":"1-0"},"stale-date":1700003600}}"#, "", "", .delivered),
        (#"{"aps":{"timestamp":1700005400,"event":"end","content-state":{"score":"2-1"},"dismissal-date":1700009000}}"#, "", "", .delivered),
        (#"{"aps":{"timestamp":1700000000,"event":"begin","content-state":{}}}"#, "", "", .rule("aps.event must be \"start\", \"update\" or \"end\"")),
        (start.replacingOccurrences(of: #","alert":{"title":"Kick-off","body":"A v B"}"#, with: ""), "", "", .rule("a Live Activity start needs aps.alert")),
        (#"{"aps":{"timestamp":1,"event":"update","content-state":{},"input-push-channel":"dHN0"}}"#, "", "", .rule("aps.input-push-channel belongs on a Live Activity start only")),
        (#"{"aps":{"event":"end","content-state":{}}}"#, "", "", .rule("a Live Activity update or end needs aps.timestamp")),
        (start.replacingOccurrences(of: #""attributes-type":"MatchAttributes","#, with: ""), "", "", .rule("a Live Activity start needs aps.attributes-type")),
        (start.replacingOccurrences(of: #""attributes":{"home":"A","away":"B"},"#, with: ""), "", "", .rule("a Live Activity start needs aps.attributes,")),
        (#"{"event":"update","timestamp":1}"#, "", "", .rule("Live Activity payload has no \"aps\" object")),
        ("{not json", "", "", .rejected("InvalidPayload")),
        (#"{"aps":{"timestamp":1,"event":"end"}}"#, "liveactivity", MockServerProcess.topic, .rejected("BadTopic")),
        (#"{"aps":{"alert":"hi","event":"begin"}}"#, "alert", MockServerProcess.topic, .delivered),
        (#"{"aps":{"event":"again","timestamp":1}}"#, "", "", .rejected("InvalidPayload")),
    ]

    enum Expected: Equatable {
        case delivered
        /// Rejected InvalidPayload, the first of its rule named on stderr with this text.
        case rule(String)
        case rejected(String)
    }

    static func csv(_ scratch: TemporaryDirectory) throws -> String {
        let quoted = { (field: String) in "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        let lines = rows.enumerated().map { index, row in
            [token(index + 1), quoted(row.payload), row.pushType, row.topic].joined(separator: ",")
        }
        return try scratch.write("live.csv", (["device_token,payload,push_type,topic"] + lines).joined(separator: "\n") + "\n")
    }

    static func arguments(input: String, out: String, key: String) -> [String] {
        ["send", "--input", input, "--key-file", key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
         "--topic", topic, "--push-type", "liveactivity", "--connections", "1", "--progress", "never", "--out", out]
    }

    /// Every row's record is what `rows` says, and each rule's first row is named on stderr once.
    static func checkRecords(_ run: CampaignRun) throws {
        try run.checkEveryRowExactlyOnce(rows: rows.count)
        let records = Dictionary(try run.records.map { ($0["row"] as? Int ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, row) in rows.enumerated() {
            let record = records[index + 1] ?? [:]
            switch row.expected {
            case .delivered:
                #expect(record["outcome"] as? String == "delivered", "row \(index + 1): \(record)")
            case .rule:
                #expect(record["outcome"] as? String == "rejected" && record["reason"] as? String == "InvalidPayload",
                        "row \(index + 1): \(record)")
                #expect(record["status"] as? Int == 0 && record["attempts"] as? Int == 0, "row \(index + 1) was not sent")
            case .rejected(let reason):
                #expect(record["outcome"] as? String == "rejected" && record["reason"] as? String == reason,
                        "row \(index + 1): \(record)")
            }
        }
        let stderr = run.result.stderr
        for (index, row) in rows.enumerated() {
            guard case .rule(let detail) = row.expected else { continue }
            #expect(stderr.contains("row \(index + 1) is rejected InvalidPayload: ") && stderr.contains(detail),
                    "row \(index + 1)'s rule on stderr: \(stderr)")
        }
        #expect(!stderr.contains("row \(rows.count) is rejected"), "a rule is named at its first row only: \(stderr)")
        let summary = try run.summary
        #expect(summary["delivered"] as? Int == rows.filter { $0.expected == .delivered }.count)
        #expect((summary["by_reason"] as? [String: Int])?["InvalidPayload"] == 9)
    }

    @Test func aLiveActivityCampaignDeliversStartsUpdatesAndEndsAndRejectsTheRowsThatBreakActivityKitsRules() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        let input = try Self.csv(scratch)
        let mock = try MockServerProcess(scratch: scratch, keyFile: key)
        let out = scratch.path("out")
        let run = CampaignRun(result: try Binary.run(Self.arguments(input: input, out: out, key: key)
                                                     + ["--endpoint", mock.endpoint, "--ca-file", mock.caFile]),
                              outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try Self.checkRecords(run)
        // The mock (APNs' rules: the bundle id with the push type's suffix) took every row sent, and no other.
        let received = try mock.records()
        let delivered = Self.rows.enumerated().filter { $0.element.expected == .delivered }.map { Self.token($0.offset + 1) }
        #expect(received.compactMap { $0["device_token"] as? String }.sorted() == delivered.sorted())
        #expect(received.allSatisfy { $0["status"] as? Int == 200 }, "\(received)")
    }

    @Test func aDryRunRejectsTheSameRowsAndNamesTheSameRules() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        let input = try Self.csv(scratch)
        let out = scratch.path("out")
        let result = try Binary.run(Self.arguments(input: input, out: out, key: key) + ["--endpoint", "127.0.0.1:9", "--dry-run"])
        #expect(result.status == 0, "\(result.stderr)")
        let records = try ZstdCLI.jsonLines(out + "/results.jsonl.zst")
        let rejected = Self.rows.enumerated().filter { $0.element.expected != .delivered }.map { $0.offset + 1 }
        #expect(records.compactMap { $0["row"] as? Int }.sorted() == rejected, "the rows a real run rejects, each once")
        for (index, row) in Self.rows.enumerated() {
            guard case .rule(let detail) = row.expected else { continue }
            #expect(result.stderr.contains("row \(index + 1) is rejected InvalidPayload: ") && result.stderr.contains(detail))
        }
    }

    @Test func aRunPayloadFileThatBreaksALiveActivityRuleStopsTheRunBeforeAnythingIsSent() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        let input = try scratch.write("tokens.csv", "device_token\n\(Self.token(1))\n")
        let payload = try scratch.write("update.json", #"{"aps":{"event":"update","content-state":{"score":"1-0"}}}"#)
        let out = scratch.path("out")
        let result = try Binary.run(Self.arguments(input: input, out: out, key: key)
                                    + ["--payload-file", payload, "--endpoint", "127.0.0.1:9"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--payload-file \(payload) with --push-type liveactivity: a Live Activity update or end "
                                       + "needs aps.timestamp"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"), "nothing was sent")
    }
}
