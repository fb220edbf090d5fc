import Foundation
import Testing
@testable import Pipeline

@Suite struct ResultRecordTests {
    @Test func deliveredRecordHasTheDesignLineFormat() {
        let record = ResultRecord(row: 1, deviceToken: "abc", outcome: .delivered, status: 200,
                                  apnsID: "5E5AC3A4-6C6B-4B7A-9E8B-1D2C3B4A5F6E", attempts: 1, latencyMs: 3.1,
                                  endpoint: "api.push.apple.com:443")
        #expect(record.jsonLine == #"{"row":1,"device_token":"abc","outcome":"delivered","status":200,"reason":null,"apns_id":"5E5AC3A4-6C6B-4B7A-9E8B-1D2C3B4A5F6E","attempts":1,"unregistered_at":null,"latency_ms":3.1,"endpoint":"api.push.apple.com:443"}"# + "\n")
    }

    @Test func unregisteredRecordCarriesTimestampAndConnectionLossFlag() {
        let record = ResultRecord(row: 12, deviceToken: "t", outcome: .unregistered, status: 410, reason: "Unregistered",
                                  attempts: 2, unregisteredAt: 1_795_426_299_123, latencyMs: 0.25, endpoint: "h:1",
                                  retriedAfterConnectionLoss: true)
        #expect(record.jsonLine == #"{"row":12,"device_token":"t","outcome":"unregistered","status":410,"reason":"Unregistered","apns_id":null,"attempts":2,"unregistered_at":1795426299123,"latency_ms":0.25,"endpoint":"h:1","retried_after_connection_loss":true}"# + "\n")
    }

    @Test func neverSentRecordHasStatusZeroAndNulls() {
        let record = ResultRecord(row: 3, deviceToken: "", outcome: .rejected, reason: "BadDeviceToken")
        #expect(record.jsonLine == #"{"row":3,"device_token":"","outcome":"rejected","status":0,"reason":"BadDeviceToken","apns_id":null,"attempts":0,"unregistered_at":null,"latency_ms":null,"endpoint":null}"# + "\n")
    }

    @Test func stringsAreEscapedAndNonASCIIPassesThrough() {
        var out: [UInt8] = []
        JSONText.appendString("a\"b\\c\nd\re\tf\u{08}\u{0C}\u{01}\u{1F}é🎉/", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""a\"b\\c\nd\re\tf\b\f\u0001\u001fé🎉/""#)
        let decoded = try? JSONSerialization.jsonObject(with: Data(out), options: .fragmentsAllowed) as? String
        #expect(decoded == "a\"b\\c\nd\re\tf\u{08}\u{0C}\u{01}\u{1F}é🎉/")
    }

    @Test func numbersAreFormattedWithoutFoundation() {
        func text(_ body: (inout [UInt8]) -> Void) -> String {
            var out: [UInt8] = []
            body(&out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(text { JSONText.appendInteger(0, to: &$0) } == "0")
        #expect(text { JSONText.appendInteger(-42, to: &$0) } == "-42")
        #expect(text { JSONText.appendInteger(Int64.min, to: &$0) } == "-9223372036854775808")
        #expect(text { JSONText.appendMilliseconds(5, to: &$0) } == "5.0")
        #expect(text { JSONText.appendMilliseconds(0.0004, to: &$0) } == "0.0")
        #expect(text { JSONText.appendMilliseconds(12.3456, to: &$0) } == "12.346")
        #expect(text { JSONText.appendMilliseconds(1.05, to: &$0) } == "1.05")
    }

    @Test func everyLineIsValidJSONForAnIndependentParser() throws {
        for record in ResultLogTests.sampleRecords(8) {
            let object = try JSONSerialization.jsonObject(with: Data(record.jsonLine.utf8)) as? [String: Any]
            #expect(object?["device_token"] as? String == record.deviceToken)
            #expect(object?["outcome"] as? String == record.outcome.rawValue)
        }
    }

    @Test func outcomeRawValuesAreTheContract() {
        #expect(Outcome.allCases.map(\.rawValue) == ["delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up", "aborted"])
    }
}
