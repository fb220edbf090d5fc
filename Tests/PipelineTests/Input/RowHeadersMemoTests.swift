import APNs
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// The reader remembers rows' own header columns (`RowHeadersMemo`): a row whose header fields
/// are another's, byte for byte, shares its checked headers; anything different decodes afresh.
@Suite struct RowHeadersMemoTests {
    static let token = String(repeating: "ab", count: 32)

    static func decoded(_ csv: String, memo: RowHeadersMemo?) throws -> [RowDecoder.Decoded] {
        let directory = try TemporaryDirectory()
        let source = try CSVSource(path: try directory.write("c.csv", csv))
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: nil, auth: .token)
        var out: [RowDecoder.Decoded] = []
        while let batch = try source.nextBatch() {
            for index in batch.indices { out.append(decoder.decode(batch, at: index, memo: memo)) }
        }
        return out
    }

    static func headers(_ decoded: RowDecoder.Decoded) -> RowHeaders? {
        if case .send(let job) = decoded { job.headers } else { nil }
    }

    static let csv = """
        device_token,payload,topic,push_type,priority,apns_id
        \(token),{},com.example.a,,,
        \(token),{},com.example.b,,,
        \(token),{},com.example.a,,,
        \(token),{},com.example.a,background,5,
        \(token),{},com.example.a,,,
        \(token),{},com.example.a.voip,voip,,
        \(token),{},com.example.a.voip,alert,,
        \(token),{},com.example.a,,,123e4567-e89b-12d3-a456-426614174000
        \(token),{},com.example.a,,,123e4567-e89b-12d3-a456-426614174000

        """

    @Test func rowsWithTheSameHeaderFieldsShareOneCheckedCopyAndDecodeAsWithout() throws {
        let with = try Self.decoded(Self.csv, memo: RowHeadersMemo())
        let without = try Self.decoded(Self.csv, memo: nil)
        #expect(with.count == without.count)
        for (a, b) in zip(with, without) {
            #expect(Self.headers(a)?.fields == Self.headers(b)?.fields)
            #expect(Self.headers(a)?.own == Self.headers(b)?.own)
            if case .rejected(let reason) = b { #expect({ if case .rejected(reason) = a { true } else { false } }()) }
        }
        let rows = with.map(Self.headers)
        #expect(rows[0] != nil && rows[0] === rows[2] && rows[2] === rows[4], "com.example.a, decoded once")
        #expect(rows[1] !== rows[0], "another topic")
        #expect(rows[3] !== rows[0] && rows[3]?.values.pushType == .background, "other columns, other headers")
        #expect(rows[5]?.values.pushType == .voip)
        #expect(rows[6] == nil, "a .voip topic sent as alert is still BadTopic when its neighbour was fine")
        #expect(rows[7] != nil && rows[8] != nil && rows[7] !== rows[8], "a row with its own apns-id is never shared")
    }

    @Test func tenTopicsInTurnAreEachDecodedOnce() throws {
        // Scenario 9's shape: rows cycle through ten apps; a table where two of them took one slot
        // decoded those anew at every turn.
        var csv = "device_token,payload,topic\n"
        for row in 0..<100 { csv += "\(Self.token),{},com.example.bench\(row % 10)\n" }
        let rows = try Self.decoded(csv, memo: RowHeadersMemo()).map(Self.headers)
        for row in 10..<100 { #expect(rows[row] != nil && rows[row] === rows[row % 10], "row \(row)") }
    }
}
