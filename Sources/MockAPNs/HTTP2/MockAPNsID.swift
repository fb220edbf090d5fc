import ByteScan
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
        appendHexDigits(8, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        appendHexDigits(4, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        appendHexDigits(4, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        appendHexDigits(4, of: &low, to: &field)
        field.append(UInt8(ascii: "-"))
        appendHexDigits(12, of: &low, to: &field)
        return field
    }

    /// A fresh random UUID (version 4 layout) for a sandbox answer's `apns-unique-id`.
    static func uniqueID(using random: inout MockRandom) -> UUIDBytes {
        UUIDBytes(high: random.next() & ~(0xf << 12) | (4 << 12),
                  low: random.next() & ~(0x3 << 62) | (0x2 << 62))
    }

    private static func appendHexDigits(_ count: Int, of word: inout UInt64, to field: inout H2ResponseField) {
        for _ in 0..<count {
            field.append(hexDigit(UInt8(truncatingIfNeeded: word) & 0x0f))
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
    func respond(streamID: Int32, status: Int, body: [UInt8], uniqueID: UUIDBytes?, on connection: H2ServerConnection) {
        if let uniqueID {
            var unique = H2ResponseField(name: "apns-unique-id", neverIndexed: true)
            uniqueID.withText { for byte in $0 { unique.append(byte) } }
            switch self {
            case .field(let field):
                connection.respond(streamID: streamID, status: status, field: field, second: unique, body: body)
            case .text(let text):
                connection.respond(streamID: streamID, status: status,
                                   headers: [H2Header("apns-id", text, indexing: .neverIndexed),
                                             H2Header("apns-unique-id", uniqueID.description, indexing: .neverIndexed)],
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
