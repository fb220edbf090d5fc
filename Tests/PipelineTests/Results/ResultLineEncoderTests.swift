import ByteScan
import Testing
import TestSupport
import Transport
import ZstdFile
@testable import Pipeline

/// results.jsonl.zst's lines have one writer (`ResultLineEncoder`): the writer thread's record of a
/// row and the record a reader parses back from its line must write that line again, byte for byte.
@Suite struct ResultLineEncoderTests {
    /// Every outcome, with each kind of apns-id and of text, and each optional field both ways.
    static func everyShape() -> [RowResult] {
        let apnsIDs: [InlineText?] = [nil, InlineText(""), InlineText("5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e"),
                                      InlineText(String(repeating: "5e5ac3a4-", count: 7)), InlineText("a\"b\\c")]
        let reasons: [String?] = [nil, "BadDeviceToken", "status 503", "quote\" back\\slash\nnew line \u{1} é"]
        let tokens: [[UInt8]] = [Array("0a1b2c3d4e5f".utf8), Array("t\"ok\te\u{7f}n".utf8), [0x61, 0xFF, 0x62], []]
        var shapes: [RowResult] = []
        var index = 0
        for outcome in Outcome.allCases {
            for apnsID in apnsIDs {
                for reason in reasons {
                    for token in tokens {
                        index += 1
                        shapes.append(RowResult(
                            row: index, deviceToken: token[...], outcome: outcome,
                            status: [0, 200, 410, 400, 429][index % 5], reason: reason, apnsID: apnsID,
                            attempts: index % 4, unregisteredAt: index % 3 == 0 ? 1_795_426_299_123 : nil,
                            latencyMs: index % 5 == 0 ? nil : Double(index) / 8,
                            endpoint: [nil, "api.push.apple.com:443", "h\"1"][index % 3],
                            retriedAfterConnectionLoss: index % 2 == 0, duplicateOf: index % 6 == 0 ? index / 2 : 0,
                            uniqueID: index % 4 == 0 ? UUIDBytes("0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5") : nil))
                    }
                }
            }
        }
        return shapes
    }

    @Test func everyRecordShapeWritesTheSameLineFromItsRowResultAndFromTheRecordParsedBackFromIt() throws {
        let shapes = Self.everyShape()
        #expect(shapes.count == 560)
        for result in shapes {
            var line: [UInt8] = []
            result.appendJSONLine(to: &line)
            let parsed = try ResultRecordParser.parse(line.dropLast())
            #expect(parsed == result.record)
            var again: [UInt8] = []
            parsed.appendJSONLine(to: &again)
            #expect(again == line, "\(String(decoding: line, as: UTF8.self))")
            #expect(parsed.jsonLine.utf8.elementsEqual(line))
        }
    }

    @Test func aRecordsLineIsTheSameWrittenInPlaceIntoTheLogAsIntoAnArray() throws {
        let directory = try TemporaryDirectory()
        let log = try ResultLog(path: directory.path("results.jsonl.zst"), maxFrameBytes: 20_000)
        var expected: [UInt8] = []
        for result in Self.everyShape() {
            result.appendJSONLine(to: &expected)
            try log.append(result)
            try log.append(result.record)
            result.record.appendJSONLine(to: &expected)
        }
        try log.close()
        #expect(try decodedLog(at: directory.path("results.jsonl.zst")) == expected)
    }

    @Test func aLabelledRecordParsedBackFromItsLineWritesTheLineAgain() throws {
        let labels = RecordLabels(lanes: [(.production, "KEYONE0001"), (.sandbox, "cert \"CN\" é")])
        let directory = try TemporaryDirectory()
        let log = try ResultLog(path: directory.path("results.jsonl.zst"))
        log.labels = labels
        var count = 0
        for (index, shape) in Self.everyShape().enumerated() where index % 7 == 0 {
            for lane: UInt16 in 0...3 {
                for code: UInt8 in 0...3 {
                    let result = RowResult(row: shape.row, deviceToken: shape.deviceToken, outcome: shape.outcome,
                                           status: shape.status, reason: shape.reason, apnsID: shape.apnsID,
                                           attempts: shape.attempts, unregisteredAt: shape.unregisteredAt,
                                           latencyMs: shape.latencyMs, endpoint: shape.endpoint,
                                           retriedAfterConnectionLoss: shape.retriedAfterConnectionLoss,
                                           uniqueID: shape.uniqueID, lane: lane, environmentCode: code,
                                           fallbackFrom: (code + UInt8(lane)) % 4)
                    try log.append(result)
                    count += 1
                }
            }
        }
        try log.close()
        let written = try decodedLog(at: directory.path("results.jsonl.zst"))
        let reader = try ResultLogReader(path: directory.path("results.jsonl.zst"))
        var again: [UInt8] = []
        var lines = 0
        while let record = try reader.next() {
            lines += 1
            record.appendJSONLine(to: &again)
        }
        #expect(lines == count)
        #expect(again == written)
        #expect(written.count > 0 && String(decoding: written, as: UTF8.self).contains(#""key_id":"cert \"CN\" é""#))
    }

    /// The apns-id's own type holds what three loose fields held, in the same room.
    @Test func aRowResultIsNoWiderThanWithTheApnsIDInThreeFields() {
        print("MemoryLayout<RowResult> size \(MemoryLayout<RowResult>.size) stride \(MemoryLayout<RowResult>.stride)")
        #expect(MemoryLayout<RowResult>.size <= 241 && MemoryLayout<RowResult>.stride <= 248)
    }
}

/// The bytes of a result log, as zstd decodes them.
func decodedLog(at path: String) throws -> [UInt8] {
    let reader = try ZstdStreamReader(path: path)
    var decoded: [UInt8] = []
    while try reader.read(appendingTo: &decoded, limit: 1 << 20) != .end {}
    return decoded
}
