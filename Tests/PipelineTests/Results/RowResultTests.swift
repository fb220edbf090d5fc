import ByteScan
import Testing
import TestSupport
import Transport
import ZstdFile
@testable import Pipeline

@Suite struct RowResultTests {
    @Test func aRowResultWritesTheSameLineAsItsRecord() {
        let record = ResultRecord(row: 3, deviceToken: "ab\"c", outcome: .unregistered, status: 410,
                                  reason: "Unregistered", apnsID: "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e", attempts: 2,
                                  unregisteredAt: 1_795_426_299_123, latencyMs: 1.5, endpoint: "h:1",
                                  retriedAfterConnectionLoss: true)
        var line: [UInt8] = []
        RowResult(record).appendJSONLine(to: &line)
        // Pinned text: both types write through RowResult, so comparing them to each other proves nothing.
        #expect(String(decoding: line, as: UTF8.self) == #"{"row":3,"device_token":"ab\"c","outcome":"unregistered","status":410,"reason":"Unregistered","apns_id":"5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e","attempts":2,"unregistered_at":1795426299123,"latency_ms":1.5,"endpoint":"h:1","retried_after_connection_loss":true}"# + "\n")
        #expect(RowResult(record).record == record)
    }

    @Test func anApnsUniqueIDIsWrittenLastOnBothPathsAndReadBack() throws {
        let id = "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5"
        let plain = ResultRecord(row: 1, deviceToken: "ab", outcome: .delivered, status: 200,
                                 apnsID: "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e", attempts: 1, latencyMs: 1.5,
                                 endpoint: "h:1", apnsUniqueID: id)
        // A token that needs escaping takes the general path.
        var escaped = plain
        escaped.deviceToken = "a\"b"
        for record in [plain, escaped] {
            let line = record.jsonLine
            #expect(line.hasSuffix(#","endpoint":"h:1","apns_unique_id":"\#(id)"}"# + "\n"), "\(line)")
            #expect(try ResultRecordParser.parse(ArraySlice(line.utf8)) == record)
        }
    }

    @Test func aRecordWithoutAnApnsUniqueIDLeavesTheFieldOut() throws {
        let record = ResultRecord(row: 1, deviceToken: "ab", outcome: .delivered, status: 200, attempts: 1)
        #expect(!record.jsonLine.contains("apns_unique_id"))
        #expect(try ResultRecordParser.parse(ArraySlice(record.jsonLine.utf8)).apnsUniqueID == nil)
        // Text that is not a UUID is never written into a line.
        var junk = record
        junk.apnsUniqueID = "not-a-uuid"
        #expect(!junk.jsonLine.contains("apns_unique_id"))
    }

    @Test func anUppercaseApnsUniqueIDIsWrittenLowercase() {
        let record = ResultRecord(row: 1, deviceToken: "ab", outcome: .delivered,
                                  apnsUniqueID: "0D6E2BA9-2D63-4E63-9A6C-0D4A2C40CDA5")
        #expect(record.jsonLine.contains(#""apns_unique_id":"0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5""#))
    }

    @Test func aServerApnsIDThatNeedsEscapingIsEscaped() {
        let result = RowResult(row: 1, deviceToken: Array("t".utf8)[...], outcome: .delivered, status: 200,
                               apnsID: InlineText("a\"b\\c"))
        var line: [UInt8] = []
        result.appendJSONLine(to: &line)
        #expect(String(decoding: line, as: UTF8.self).contains(#""apns_id":"a\"b\\c""#))
    }

    /// The apns-id travels from the answer to the line as text and a flag (`APNsID(of:)`: the inline
    /// bytes of `H2Response.apnsIDValue`, or its text when longer than they hold, and `hasAPNsID`): an empty header is
    /// `""`, no header `null`, a long one whole (escaped where it needs it), on both paths.
    @Test func anEmptyApnsIDIsWrittenAsEmptyTextAMissingOneAsNullAndALongOneWhole() throws {
        let long = String(repeating: "5e5ac3a4-", count: 8)
        for (value, present, expected) in [("", true, #""apns_id":"","#), ("", false, #""apns_id":null,"#),
                                           ("5e5ac3a4", true, #""apns_id":"5e5ac3a4","#),
                                           (long, true, #""apns_id":""# + long + #"","#),
                                           (long + "\"", true, "\"apns_id\":\"" + long + "\\\"\",")] {
            let response = H2Response(tag: 1, submittedAt: 0, streamID: 1, status: 200, apnsIDValue: InlineText(value),
                                      hasAPNsID: present, body: [])
            #expect(response.apnsIDText == (present ? InlineText(value) : nil))
            for token in ["ab", "a\"b"] {
                let result = RowResult(row: 1, deviceToken: Array(token.utf8)[...], outcome: .delivered, status: 200,
                                       reason: nil, apnsID: APNsID(of: response), attempts: 1, unregisteredAt: nil, latencyMs: 1.5, endpoint: "h:1",
                                       retriedAfterConnectionLoss: false, uniqueID: nil, lane: 0, fallbackFrom: 0)
                var line: [UInt8] = []
                result.appendJSONLine(to: &line)
                let text = String(decoding: line, as: UTF8.self)
                #expect(text.contains(expected), "\(text)")
                #expect(result.apnsID.text == response.apnsIDText)
                #expect(try ResultRecordParser.parse(line[...]).apnsID == (present ? value : nil))
            }
        }
    }

    @Test func tokenBytesThatAreNotUTF8StillMakeAValidLine() {
        let result = RowResult(row: 1, deviceToken: [0x61, 0xFF, 0x62][...], outcome: .rejected, reason: "BadDeviceToken")
        var line: [UInt8] = []
        result.appendJSONLine(to: &line)
        let text = String(decoding: line, as: UTF8.self)
        #expect(Array(text.utf8) == line)
        #expect(text.contains(#""device_token":"a\#u{FFFD}b""#))
    }

    @Test func theOneCopyPathWritesWhatTheEscapingPathWrites() {
        var random = SeededRandom(seed: 7)
        let reasons: [String?] = [nil, "Unregistered", "TooManyRequests", "status 503"]
        let endpoints: [String?] = [nil, "api.push.apple.com:443", "127.0.0.1:2197"]
        for index in 0..<2000 {
            let token = Array(String(repeating: "0a1B", count: Int(random.next() % 40)).utf8)
            let result = RowResult(
                row: Int(random.next() % 10_000_000), deviceToken: token[...],
                outcome: Outcome.allCases[Int(random.next() % UInt64(Outcome.allCases.count))],
                status: [0, 200, 410, 429, 503][Int(random.next() % 5)],
                reason: reasons[Int(random.next() % UInt64(reasons.count))],
                apnsID: random.next() % 2 == 0 ? nil : InlineText(String(repeating: "5e5ac3a4-", count: index % 12)),
                attempts: Int(random.next() % 6),
                unregisteredAt: random.next() % 3 == 0 ? Int64(bitPattern: random.next()) : nil,
                latencyMs: random.next() % 4 == 0 ? nil : Double(Int64(bitPattern: random.next()) % 10_000_000) / 997,
                endpoint: endpoints[Int(random.next() % UInt64(endpoints.count))],
                retriedAfterConnectionLoss: random.next() % 2 == 0)
            var fast: [UInt8] = [], general: [UInt8] = []
            let tookFastPath = result.appendPlainJSONLine(to: &fast)
            result.appendEscapedJSONLine(to: &general)
            #expect(tookFastPath)
            #expect(fast == general, "\(String(decoding: general, as: UTF8.self))")
        }
    }
}

/// The result log's own path (each line written straight into the next zstd frame, its text checked
/// as it is copied) against the escaping path, byte for byte, over rows whose text is sometimes
/// plain and sometimes needs escaping at its first, middle or last byte.
@Suite struct ResultLogLineTests {
    private static func text(_ random: inout SeededRandom, plain: [String]) -> String? {
        let spoilers = ["\"", "\\", "\n", "\u{1}", "é", "😀"]
        switch random.next() % 8 {
        case 0: return nil
        case 1:
            var base = Array(plain[Int(random.next() % UInt64(plain.count))])
            let spoiler = Character(spoilers[Int(random.next() % UInt64(spoilers.count))])
            base.insert(spoiler, at: Int(random.next() % UInt64(base.count + 1)))
            return String(base)
        default: return plain[Int(random.next() % UInt64(plain.count))]
        }
    }

    @Test func aLineWithEveryFieldAtItsWidestFitsTheRoomReservedAndMatchesTheEscapingPath() throws {
        let result = RowResult(
            row: Int.max, deviceToken: Array(String(repeating: "0a1B", count: 16).utf8)[...], outcome: .unregistered,
            status: Int.min, reason: "Unregistered", apnsID: InlineText(String(repeating: "f", count: InlineText.capacity)),
            attempts: Int.max, unregisteredAt: Int64.min, latencyMs: -9.2e15, endpoint: "api.push.apple.com:443",
            retriedAfterConnectionLoss: true, duplicateOf: Int.max,
            uniqueID: UUIDBytes("0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5"))
        var escaped: [UInt8] = [], plain: [UInt8] = []
        result.appendEscapedJSONLine(to: &escaped)
        #expect(result.appendPlainJSONLine(to: &plain))
        #expect(plain == escaped)
        let directory = try TemporaryDirectory()
        let log = try ResultLog(path: directory.path("results.jsonl.zst"))
        try log.append(result)
        try log.close()
        let reader = try ZstdStreamReader(path: directory.path("results.jsonl.zst"))
        var decoded: [UInt8] = []
        while try reader.read(appendingTo: &decoded, limit: 1 << 20) != .end {}
        #expect(decoded == escaped)
    }

    @Test func theInPlacePathWritesWhatTheEscapingPathWritesAndNothingForTextThatNeedsEscaping() throws {
        var random = SeededRandom(seed: 23)
        let directory = try TemporaryDirectory()
        // Frames of about 100 kB: several flushes, and the pending memory grows once past its first 64 KiB.
        let log = try ResultLog(path: directory.path("results.jsonl.zst"), maxFrameBytes: 100_000)
        var expected: [UInt8] = []
        var escapedRows = 0
        for index in 0..<3000 {
            let token = Self.text(&random, plain: ["", "ab", "0a1B2c3", "0a1B2c3d", String(repeating: "0a1B", count: 16),
                                                   String(repeating: "f", count: Int(index % 70))]) ?? "x"
            let apnsID = Self.text(&random, plain: ["5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e", "a", "abcdefghi"])
            let result = RowResult(
                row: Int(random.next() % 10_000_000), deviceToken: Array(token.utf8)[...],
                outcome: Outcome.allCases[Int(random.next() % UInt64(Outcome.allCases.count))],
                status: [0, 200, 200, 410, 429][Int(random.next() % 5)],
                reason: Self.text(&random, plain: ["Unregistered", "TooManyRequests", "", "status 503"]),
                apnsID: apnsID.map(InlineText.init),
                attempts: [0, 1, 1, 2, 11][Int(random.next() % 5)],
                unregisteredAt: random.next() % 3 == 0 ? Int64(bitPattern: random.next()) : nil,
                latencyMs: random.next() % 4 == 0 ? nil : Double(Int64(bitPattern: random.next()) % 10_000_000) / 997,
                endpoint: Self.text(&random, plain: ["api.push.apple.com:443", "127.0.0.1:2197", "h:1"]),
                retriedAfterConnectionLoss: random.next() % 4 == 0,
                duplicateOf: random.next() % 4 == 0 ? Int(random.next() % 1000) + 1 : 0,
                uniqueID: random.next() % 4 == 0 ? UUIDBytes("0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5") : nil)
            var escaped: [UInt8] = []
            result.appendEscapedJSONLine(to: &escaped)
            expected += escaped
            var plain: [UInt8] = []
            if result.appendPlainJSONLine(to: &plain) {
                #expect(plain == escaped, "\(String(decoding: escaped, as: UTF8.self))")
            } else {
                escapedRows += 1
                #expect(plain.isEmpty)
                #expect(escaped.contains(UInt8(ascii: "\\")) || escaped.contains { $0 >= 0x80 })
            }
            try log.append(result)
        }
        try log.close()
        #expect(escapedRows > 300 && escapedRows < 2700)
        let reader = try ZstdStreamReader(path: directory.path("results.jsonl.zst"))
        var decoded: [UInt8] = []
        while try reader.read(appendingTo: &decoded, limit: 1 << 20) != .end {}
        #expect(decoded.count == expected.count)
        #expect(decoded == expected)
    }
}
