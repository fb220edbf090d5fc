import Foundation
import Testing
import TestSupport
@testable import Pipeline

@Suite struct ReportFilesTests {
    @Test func deadTokenCSVHasHeaderISOTimesAndQuoting() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("dead-tokens.csv")
        let report = try DeadTokenReport(path: path)
        try report.add(ResultRecord(row: 4, deviceToken: "aa11", outcome: .unregistered, status: 410,
                                    reason: "Unregistered", unregisteredAt: 1_795_426_299_123))
        try report.add(ResultRecord(row: 9, deviceToken: "bb,22", outcome: .badToken, status: 400, reason: "BadDeviceToken"))
        try report.add(ResultRecord(row: 10, deviceToken: "cc33", outcome: .delivered, status: 200))
        try report.add(ResultRecord(row: 11, deviceToken: "dd\"44", outcome: .unregistered, status: 410,
                                    reason: "ExpiredToken", unregisteredAt: 0))
        try report.close()
        let text = String(decoding: try directory.read("dead-tokens.csv"), as: UTF8.self)
        #expect(text == """
            device_token,reason,status,unregistered_at,row
            aa11,Unregistered,410,2026-11-23T09:31:39.123Z,4
            "bb,22",BadDeviceToken,400,,9
            "dd""44",ExpiredToken,410,1970-01-01T00:00:00.000Z,11

            """)
    }

    @Test func isoTimesMatchFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for millis: Int64 in [0, 951_782_400_000, 1_709_164_800_999, 4_102_444_799_001, 1_795_426_299_123] {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
            #expect(ISO8601.format(milliseconds: millis) == expected)
        }
    }

    @Test func summaryJSONHasTheContractKeys() throws {
        var summary = Summary(rows: 4)
        for record in ResultLogTests.sampleRecords(4) { summary.add(record) }
        summary.elapsedSeconds = 2
        summary.connections = 3
        summary.endpoints = ["api.push.apple.com:443"]
        summary.exitStatus = 3
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["rows", "delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up",
                                     "aborted", "by_reason", "elapsed_s", "notifications_per_s", "latency_ms",
                                     "connections", "endpoints", "unreachable_endpoints", "exit_status", "resent_after_crash",
                                     "started_at", "finished_at", "input", "fingerprint", "shard", "apns_bulk_version"])
        #expect(object["resent_after_crash"] as? Int == 0, "0 unless a resume sent rows again after a crash")
        #expect((object["unreachable_endpoints"] as? [Any])?.isEmpty == true, "[] when every endpoint was reached")
        // What run this was: null where it does not apply, never left out.
        for key in ["started_at", "finished_at", "input", "fingerprint", "shard"] { #expect(object[key] is NSNull, "\(key)") }
        #expect(object["apns_bulk_version"] as? String == Version.current)
        #expect(object["rows"] as? Int == 4)
        #expect(object["gave_up"] as? Int == 1)
        #expect(object["delivered"] as? Int == 1)
        #expect((object["by_reason"] as? [String: Int]) == ["Unregistered": 1, "BadDeviceToken": 1, "ServiceUnavailable": 1])
        #expect(object["notifications_per_s"] as? Double == 1.0)
        let latency = try #require(object["latency_ms"] as? [String: Double])
        #expect(Set(latency.keys) == ["p50", "p90", "p99", "max"])
        #expect(latency["max"].map { abs($0 - 12.0) < 0.05 } == true)
        #expect(object["endpoints"] as? [String] == ["api.push.apple.com:443"])
        #expect(object["exit_status"] as? Int == 3)
        #expect(summary.accountingHolds)
        #expect(summary.humanText.contains("gave_up 1"))
        #expect(summary.humanText.hasPrefix("4 rows: "))

        summary.startedAtMilliseconds = 1_795_426_299_123
        summary.finishedAtMilliseconds = 1_795_426_301_456
        summary.input = "/data/campaign \"nightly\".csv"
        summary.fingerprint = InputFingerprint(size: 1234, sampleSHA256: String(repeating: "ab", count: 32))
        summary.shard = Shard(index: 1, count: 3)
        let identified = try #require(try JSONSerialization.jsonObject(with: Data(summary.json.utf8)) as? [String: Any])
        #expect(identified["started_at"] as? String == "2026-11-23T09:31:39.123Z")
        #expect(identified["finished_at"] as? String == "2026-11-23T09:31:41.456Z")
        #expect(identified["input"] as? String == "/data/campaign \"nightly\".csv")
        let fingerprint = try #require(identified["fingerprint"] as? [String: Any])
        #expect(fingerprint["size"] as? Int == 1234 && fingerprint["sample_sha256"] as? String == String(repeating: "ab", count: 32))
        #expect(identified["shard"] as? String == "1/3")
        #expect(summary.humanText.hasPrefix("4 rows of shard 1/3: "))
    }

    @Test func accountingCheckCatchesAMissingRow() {
        var summary = Summary(rows: 5)
        for record in ResultLogTests.sampleRecords(4) { summary.add(record) }
        #expect(!summary.accountingHolds)
        #expect(summary.humanText.contains("ACCOUNTING MISMATCH"))
    }

    @Test func deadTokenMergeKeepsTheLatestUnregisteredAt() {
        let merge = DeadTokenMerge()
        merge.add(ResultRecord(row: 1, deviceToken: "a", outcome: .unregistered, status: 410, unregisteredAt: 200))
        merge.add(ResultRecord(row: 2, deviceToken: "b", outcome: .badToken, status: 400))
        merge.add(ResultRecord(row: 3, deviceToken: "a", outcome: .unregistered, status: 410, unregisteredAt: 100))
        merge.add(ResultRecord(row: 4, deviceToken: "b", outcome: .unregistered, status: 410, unregisteredAt: 50))
        merge.add(ResultRecord(row: 5, deviceToken: "c", outcome: .delivered, status: 200))
        #expect(merge.records.map(\.deviceToken) == ["a", "b"])
        #expect(merge.records.map(\.row) == [1, 4])
    }

    @Test func generatedTokensAreDistinctAndDeterministic() {
        let tokens = (1...20_000).map { CampaignGenerator.token(row: $0, seed: 7) }
        #expect(Set(tokens).count == 20_000)
        #expect(tokens.allSatisfy { $0.count == 64 })
        #expect(CampaignGenerator.token(row: 5, seed: 7) == tokens[4])
        #expect(CampaignGenerator.token(row: 5, seed: 8) != tokens[4])
    }
}
