import ByteScan
import CNGHTTP2
import Testing
import Transport

/// A server session's never-indexed answer fields: the connection's first answer carrying a name
/// puts it in HPACK's dynamic table, later answers name it by index and keep their values never
/// indexed; the client reads every one.
@Suite struct H2ServerIndexedNamesTests {
    /// The answers' header blocks as they went out, each decoded by an independent nghttp2 inflater
    /// (one per connection, as the client's), with the client's responses.
    final class Wire {
        /// The sessions only: the bytes between them are moved here, to see the server's.
        private let pair: H2TestPair
        var client: H2ClientSession { pair.client }
        var server: H2ServerSession { pair.server }
        var blocks: [[UInt8]] = []
        var responses: [H2Response] = []
        private var buffer: [UInt8] = []

        init() throws { pair = try H2TestPair() }

        /// One request, answered by `answer`, then every byte moved both ways until idle.
        func exchange(tag: UInt64, _ answer: (Int32) throws -> Void) throws {
            try client.submit(path: "/3/device/\(String(repeating: "ab", count: 32))",
                              headers: [H2Header("apns-topic", "com.example.app")], body: Array("{}".utf8),
                              tag: tag, submittedAt: tag)
            for _ in 0..<100 {
                buffer.removeAll(keepingCapacity: true)
                try client.drainOutput(into: &buffer, limit: .max)
                let sent = !buffer.isEmpty
                if sent { try server.receive(buffer) }
                var streams: [Int32] = []
                server.drainEvents { if case .request(let request) = $0 { streams.append(request.streamID) } }
                for stream in streams { try answer(stream) }
                buffer.removeAll(keepingCapacity: true)
                try server.drainOutput(into: &buffer, limit: .max)
                let answered = !buffer.isEmpty
                if answered {
                    blocks += Self.headerBlocks(buffer)
                    try client.receive(buffer)
                }
                client.drainEvents { if case .response(let response) = $0 { responses.append(response) } }
                if !sent, !answered, streams.isEmpty { return }
            }
        }

        /// The header block fragments of the HEADERS frames in `bytes` (the server pads nothing and
        /// sends no priority, and its small blocks need no CONTINUATION).
        static func headerBlocks(_ bytes: [UInt8]) -> [[UInt8]] {
            var blocks: [[UInt8]] = []
            var offset = 0
            while offset + 9 <= bytes.count {
                let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
                if bytes[offset + 3] == 1 { blocks.append(Array(bytes[(offset + 9)..<(offset + 9 + length)])) }
                offset += 9 + length
            }
            return blocks
        }
    }

    /// A decoded field: name, value, sent never indexed.
    struct Field: Equatable {
        var name: String
        var value: String
        var neverIndexed: Bool
    }

    /// Decodes `blocks` in order with one inflater, as the peer's HPACK decoder does.
    static func decode(_ blocks: [[UInt8]]) throws -> [[Field]] {
        var inflater: OpaquePointer?
        try #require(nghttp2_hd_inflate_new(&inflater) == 0)
        defer { nghttp2_hd_inflate_del(inflater) }
        return try blocks.map { block in
            var fields: [Field] = []
            try block.withUnsafeBufferPointer { input in
                var offset = 0
                while true {
                    var nv = nghttp2_nv()
                    var flags: Int32 = 0
                    let used = nghttp2_hd_inflate_hd2(inflater, &nv, &flags, input.baseAddress! + offset,
                                                      input.count - offset, 1)
                    try #require(used >= 0)
                    offset += used
                    if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                        fields.append(Field(name: String(decoding: UnsafeBufferPointer(start: nv.name, count: nv.namelen), as: UTF8.self),
                                            value: String(decoding: UnsafeBufferPointer(start: nv.value, count: nv.valuelen), as: UTF8.self),
                                            neverIndexed: nv.flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0))
                    }
                    if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 { break }
                }
            }
            nghttp2_hd_inflate_end_headers(inflater)
            return fields
        }
    }

    /// Whether `block` (`:status` 200 from the static table, then never-indexed literals) names
    /// each of its `count` fields by a dynamic table index: HPACK's never-indexed literal with a
    /// name index above the static table's 61 starts 0x1F (0x10 is a literal name).
    static func namesEveryFieldByIndex(_ block: [UInt8], count: Int) -> Bool {
        guard block.first == 0x88 else { return false }
        var offset = 1
        for _ in 0..<count {
            guard offset + 2 < block.count, block[offset] == 0x1F, block[offset + 1] < 0x80 else { return false }
            offset += 2
            let length = Int(block[offset] & 0x7F)
            offset += 1 + length
        }
        return offset == block.count
    }

    static func uuid(_ digit: Character) -> String {
        "\(String(repeating: digit, count: 8))-4\(String(repeating: digit, count: 3))-8\(String(repeating: digit, count: 3))-\(String(repeating: digit, count: 4))-\(String(repeating: digit, count: 12))"
    }

    static func field(_ name: StaticString, _ value: String) throws -> H2ResponseField {
        try #require(H2ResponseField(name: name, value: value, neverIndexed: true))
    }

    @Test func neverIndexedInlineFieldsNameTheirFieldByIndexAfterTheConnectionsFirstAnswer() throws {
        let wire = try Wire()
        let digits: [Character] = ["1", "2", "3"]
        for (tag, digit) in digits.enumerated() {
            try wire.exchange(tag: UInt64(tag)) { stream in
                try wire.server.respond(streamID: stream, status: 200, field: Self.field("apns-id", Self.uuid(digit)),
                                        second: Self.field("apns-unique-id", Self.uuid(digit)))
            }
        }
        let decoded = try Self.decode(wire.blocks)
        try #require(decoded.count == 3)
        for (index, digit) in digits.enumerated() {
            let first = index == 0
            #expect(decoded[index] == [Field(name: ":status", value: "200", neverIndexed: false),
                                       Field(name: "apns-id", value: Self.uuid(digit), neverIndexed: !first),
                                       Field(name: "apns-unique-id", value: Self.uuid(digit), neverIndexed: !first)])
            #expect(first || Self.namesEveryFieldByIndex(wire.blocks[index], count: 2), "answer \(index)")
        }
        #expect(wire.responses.map(\.apnsID) == digits.map { Self.uuid($0) })
        #expect(wire.responses.map { $0.uniqueID?.description } == digits.map { Self.uuid($0) })
    }

    @Test func answersThroughHeaderArraysShareTheConnectionsIndexedNames() throws {
        let wire = try Wire()
        try wire.exchange(tag: 1) { stream in
            try wire.server.respond(streamID: stream, status: 200, field: Self.field("apns-id", Self.uuid("a")))
        }
        try wire.exchange(tag: 2) { stream in
            try wire.server.respond(streamID: stream, status: 200,
                                    headers: [H2Header("apns-id", Self.uuid("b"), indexing: .neverIndexed)])
        }
        let decoded = try Self.decode(wire.blocks)
        try #require(decoded.count == 2)
        #expect(decoded[1] == [Field(name: ":status", value: "200", neverIndexed: false),
                               Field(name: "apns-id", value: Self.uuid("b"), neverIndexed: true)])
        #expect(Self.namesEveryFieldByIndex(wire.blocks[1], count: 1))
        #expect(wire.responses.map(\.apnsID) == [Self.uuid("a"), Self.uuid("b")])
    }
}
