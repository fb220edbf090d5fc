import Foundation
import Testing
@testable import Pipeline

/// A broadcast's kind of result line: send's encoder under a broadcast's names, read back by the
/// same parser.
@Suite struct BroadcastResultLineTests {
    @Test func aDeliveredBroadcastLineNamesTheChannelAndTheRequestID() {
        var record = ResultRecord(row: 1, deviceToken: "dHN0LXNyY2gtY2hubA==", outcome: .delivered, status: 200,
                                  apnsID: "123e4567-e89b-12d3-a456-426614174000", attempts: 1, latencyMs: 3.1,
                                  endpoint: "api.push.apple.com:443",
                                  apnsUniqueID: "21b853a6-6b8c-4244-9cb4-d863f8b50385")
        record.kind = .broadcast
        #expect(record.jsonLine == #"{"row":1,"channel_id":"dHN0LXNyY2gtY2hubA==","outcome":"delivered","status":200,"reason":null,"apns_request_id":"123e4567-e89b-12d3-a456-426614174000","attempts":1,"latency_ms":3.1,"endpoint":"api.push.apple.com:443","apns_unique_id":"21b853a6-6b8c-4244-9cb4-d863f8b50385"}"# + "\n")
    }

    @Test func aFailedBroadcastLineRoundTripsThroughTheParser() throws {
        var record = ResultRecord(row: 7, deviceToken: "c2Vjb25k", outcome: .failed, status: 400, reason: "ChannelNotRegistered",
                                  apnsID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", attempts: 2, latencyMs: 0.25, endpoint: "h:1",
                                  retriedAfterConnectionLoss: true)
        record.kind = .broadcast
        let line = record.jsonLine
        #expect(line == #"{"row":7,"channel_id":"c2Vjb25k","outcome":"failed","status":400,"reason":"ChannelNotRegistered","apns_request_id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0","attempts":2,"latency_ms":0.25,"endpoint":"h:1","retried_after_connection_loss":true}"# + "\n")
        let parsed = try ResultRecordParser.parse(Array(line.utf8.dropLast())[...])
        #expect(parsed == record)
    }

    @Test func theRowsOwnRecordIsWrittenAsABroadcastsByTheResultLog() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("broadcast-line-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try ResultLog(path: directory + "/results.jsonl.zst")
        log.kind = .broadcast
        try log.append(RowResult(row: 2, deviceToken: Array("Y2hhbm5lbA==".utf8)[...], outcome: .rejected, reason: "BadPriority"))
        try log.close()
        let reader = try ResultLogReader(path: directory + "/results.jsonl.zst")
        let read = try #require(try reader.next())
        #expect(read.kind == .broadcast && read.deviceToken == "Y2hhbm5lbA==" && read.reason == "BadPriority")
    }
}
