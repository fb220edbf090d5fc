import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import Pipeline

@Suite struct RowDecoderTests {
    static let token = String(repeating: "ab", count: 32)

    func decoded(_ csv: String, defaults: HeaderValues = HeaderValues(topic: "com.example.app"),
                 defaultPayload: [UInt8]? = nil) throws -> [RowDecoder.Decoded] {
        let directory = try TemporaryDirectory()
        let source = try CSVSource(path: try directory.write("c.csv", csv))
        let decoder = RowDecoder(defaults: defaults, defaultPayload: defaultPayload, auth: .token)
        var out: [RowDecoder.Decoded] = []
        while let batch = try source.nextBatch() {
            for index in batch.indices { out.append(decoder.decode(batch, at: index)) }
        }
        return out
    }

    func job(_ decoded: RowDecoder.Decoded) -> Job? {
        if case .send(let job) = decoded { job } else { nil }
    }

    func reason(_ decoded: RowDecoder.Decoded) -> String? {
        if case .rejected(let reason) = decoded { reason } else { nil }
    }

    @Test func rowsWithoutHeaderColumnsShareTheRunHeadersAndPointIntoTheBatch() throws {
        let rows = try decoded("device_token,payload\n\(Self.token),{}\n\(Self.token.uppercased()),\"{\"\"a\"\":1}\"\n")
        let first = try #require(job(rows[0])), second = try #require(job(rows[1]))
        #expect(first.headers == nil && second.headers == nil, "the run's headers, which the workers hold")
        #expect(String(decoding: first.payload(runPayload: []), as: UTF8.self) == "{}")
        #expect(String(decoding: second.payload(runPayload: []), as: UTF8.self) == #"{"a":1}"#)
        // The result log keeps the token as given; :path carries it in lowercase.
        #expect(String(decoding: second.deviceToken, as: UTF8.self) == Self.token.uppercased())
        #expect(String(decoding: second.pathToken, as: UTF8.self) == Self.token)
        let firstTokenBytes = first.deviceToken.withUnsafeBufferPointer { $0.baseAddress }
        #expect(first.pathToken.withUnsafeBufferPointer { $0.baseAddress } == firstTokenBytes,
                "a lowercase token goes in :path as the input's own bytes")
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: nil, auth: .token)
        #expect(decoder.runDefaultHeaders?.fields.map(\.name) == ["apns-topic", "apns-push-type", "apns-priority"])
    }

    @Test func rowColumnsOverrideTheRunValuesForThatRowOnly() throws {
        let rows = try decoded("""
            device_token,payload,push_type,priority,collapse_id
            \(Self.token),{},background,5,
            \(Self.token),{},,,c1

            """)
        let background = try #require(job(rows[0])), collapsed = try #require(job(rows[1]))
        #expect(background.headers?.values.pushType == .background)
        #expect(background.headers?.values.priority == .powerConsidered)
        #expect(collapsed.headers?.values.pushType == .alert)
        #expect(collapsed.headers?.values.collapseID == "c1")
        #expect(collapsed.headers?.fields.contains(H2Header("apns-collapse-id", "c1", indexing: .indexedOnFirstRequestOnly)) == true)
    }

    @Test func badRunValuesRejectEveryRowThatUsesThemAfterItsTokenIsChecked() throws {
        let rows = try decoded("""
            device_token,payload,push_type
            \(Self.token),{},
            zz,{},
            \(Self.token),{},alert

            """, defaults: HeaderValues(topic: "com.example.app", pushType: "telepathy"))
        #expect(reason(rows[0]) == "InvalidPushType")
        #expect(reason(rows[1]) == "BadDeviceToken")
        #expect(job(rows[2]) != nil)
    }

    @Test func theDefaultPayloadIsCheckedOnceButStillPerPushType() throws {
        let tooBigForVoIP = Array(("{\"a\":\"" + String(repeating: "x", count: 4_100) + "\"}").utf8)
        let rows = try decoded("""
            device_token,payload,push_type,topic
            \(Self.token),,,
            \(Self.token),,voip,com.example.app.voip
            \(Self.token),{not json},,

            """, defaultPayload: tooBigForVoIP)
        // 4 KB is too much for alert (4096 bytes) but fine for voip (5120 bytes).
        #expect(reason(rows[0]) == "PayloadTooLarge")
        #expect(job(rows[1]) != nil)
        #expect(reason(rows[2]) == "InvalidPayload")
    }

    /// Uppercase is found 8 bytes a step: one uppercase digit in any lane of any word, or in the
    /// bytes after the last whole word, makes the whole token lowercase; all-lowercase (and
    /// digits only) tokens need no copy.
    @Test func anUppercaseDigitAnywhereGivesTheLowercaseTokenAndNoneGivesNil() {
        let lower = Array("27e8ac81e7bc3b897444855180833dc577f0f9d31d7951334e7d4d7552764038bd".utf8)
        #expect(RowDecoder.lowercased(lower[...]) == nil)
        #expect(RowDecoder.lowercased(Array("0123456789".utf8)[...]) == nil)
        #expect(RowDecoder.lowercased([][...]) == nil)
        for length in [1, 7, 8, 9, 64, 66] {
            let token = Array(lower.prefix(length))
            for at in 0..<length where token[at] >= UInt8(ascii: "a") {
                var upper = token
                upper[at] &= ~0x20
                #expect(RowDecoder.lowercased(upper[...]) == token[...], "length \(length), uppercase at \(at)")
                // A slice that does not start at 0, as a batch field's does.
                let padded = [UInt8(ascii: "F")] + upper
                #expect(RowDecoder.lowercased(padded[1...]) == token[...], "length \(length), uppercase at \(at)")
            }
        }
    }
}
