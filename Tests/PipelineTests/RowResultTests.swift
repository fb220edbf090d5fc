import Testing
import Transport
@testable import Pipeline

@Suite struct RowResultTests {
    @Test func aRowResultWritesTheSameLineAsItsRecord() {
        let record = ResultRecord(row: 3, deviceToken: "ab\"c", outcome: .unregistered, status: 410,
                                  reason: "Unregistered", apnsID: "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e", attempts: 2,
                                  unregisteredAt: 1_795_426_299_123, latencyMs: 1.5, endpoint: "h:1",
                                  retriedAfterConnectionLoss: true)
        var line: [UInt8] = []
        RowResult(record).appendJSONLine(to: &line)
        #expect(String(decoding: line, as: UTF8.self) == record.jsonLine)
        #expect(RowResult(record).record == record)
    }

    @Test func aServerApnsIDThatNeedsEscapingIsEscaped() {
        let result = RowResult(row: 1, deviceToken: Array("t".utf8)[...], outcome: .delivered, status: 200,
                               apnsID: InlineText("a\"b\\c"))
        var line: [UInt8] = []
        result.appendJSONLine(to: &line)
        #expect(String(decoding: line, as: UTF8.self).contains(#""apns_id":"a\"b\\c""#))
    }

    @Test func tokenBytesThatAreNotUTF8StillMakeAValidLine() {
        let result = RowResult(row: 1, deviceToken: [0x61, 0xFF, 0x62][...], outcome: .rejected, reason: "BadDeviceToken")
        var line: [UInt8] = []
        result.appendJSONLine(to: &line)
        let text = String(decoding: line, as: UTF8.self)
        #expect(Array(text.utf8) == line)
        #expect(text.contains(#""device_token":"a\#u{FFFD}b""#))
    }
}
