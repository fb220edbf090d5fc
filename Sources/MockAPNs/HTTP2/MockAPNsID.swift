import Transport

/// The `apns-id` of an answer: one the mock made (inline bytes), or the request's own, echoed.
enum MockAPNsID {
    case field(H2ResponseField)
    /// Longer than an inline field holds (a malformed `apns-id` is echoed as it came).
    case text(String)

    static func echoed(_ value: String) -> MockAPNsID {
        H2ResponseField(name: "apns-id", value: value, neverIndexed: true).map { .field($0) } ?? .text(value)
    }

    /// A random lowercase UUID (version 4 layout) for requests without `apns-id`, as the answer's
    /// never-indexed `apns-id` field (bytes kept inline: no `String` per answer).
    /// `name` is the field's (`apns-request-id` for a broadcast's answer).
    static func generated(using random: inout MockRandom, name: StaticString = "apns-id") -> H2ResponseField {
        var high = random.next()
        var low = random.next()
        // The digits are the words' nibbles from the lowest up; the version nibble (4) and the
        // variant bits (10xx) are set in place.
        high = high & ~(0xf << 48) | (4 << 48)
        low = low & ~0xf | (8 | (low & 3))
        var field = H2ResponseField(name: name, neverIndexed: true)
        // The 36 characters written in place at once: byte by byte through `append` (a check and
        // a count per byte) they were ~600 instructions an id, two per broadcast answer.
        field.append(count: 36) { text in
            writeHexDigits(8, of: &high, to: text)
            text[8] = UInt8(ascii: "-")
            writeHexDigits(4, of: &high, to: text + 9)
            text[13] = UInt8(ascii: "-")
            writeHexDigits(4, of: &high, to: text + 14)
            text[18] = UInt8(ascii: "-")
            writeHexDigits(4, of: &low, to: text + 19)
            text[23] = UInt8(ascii: "-")
            writeHexDigits(12, of: &low, to: text + 24)
        }
        return field
    }

    /// A fresh random UUID (version 4 layout) as an answer's `apns-unique-id` field (a broadcast's,
    /// and every answer in sandbox), its hex written in place as `generated` writes it (through
    /// `UUIDBytes`' text, byte by byte, it was ~90 samples of perf's 8,600 per 300k broadcasts).
    static func uniqueID(using random: inout MockRandom) -> H2ResponseField {
        generated(using: &random, name: uniqueIDName)
    }

    static let uniqueIDName: StaticString = "apns-unique-id"

    @inline(__always)
    private static func writeHexDigits(_ count: Int, of word: inout UInt64, to text: UnsafeMutablePointer<UInt8>) {
        for index in 0..<count {
            text[index] = hexDigit(UInt8(truncatingIfNeeded: word) & 0x0f)
            word >>= 4
        }
    }

    var text: String {
        switch self {
        case .field(let field): field.valueText
        case .text(let text): text
        }
    }

    /// Sends the answer; with `uniqueID` (sandbox) it carries `apns-unique-id` too. Inline fields
    /// both, which allocate nothing (a sandbox answer through the general path, two strings and an
    /// array each, cost its mock ~10 % more than a production one's).
    func respond(streamID: Int32, status: Int, body: [UInt8], uniqueID unique: H2ResponseField?,
                 on connection: H2ServerConnection) {
        if let unique {
            switch self {
            case .field(let field):
                connection.respond(streamID: streamID, status: status, field: field, second: unique, body: body)
            case .text(let text):
                connection.respond(streamID: streamID, status: status,
                                   headers: [H2Header("apns-id", text, indexing: .neverIndexed),
                                             H2Header("apns-unique-id", unique.valueText, indexing: .neverIndexed)],
                                   body: body)
            }
            return
        }
        switch self {
        case .field(let field):
            connection.respond(streamID: streamID, status: status, field: field, body: body)
        case .text(let text):
            connection.respond(streamID: streamID, status: status,
                               headers: [H2Header("apns-id", text, indexing: .neverIndexed)], body: body)
        }
    }
}
