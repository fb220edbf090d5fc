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
    static func generated(using random: inout MockRandom) -> H2ResponseField {
        var high = random.next()
        var low = random.next()
        // The digits are the words' nibbles from the lowest up; the version nibble (4) and the
        // variant bits (10xx) are set in place.
        high = high & ~(0xf << 48) | (4 << 48)
        low = low & ~0xf | (8 | (low & 3))
        var field = H2ResponseField(name: "apns-id", neverIndexed: true)
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

    func respond(streamID: Int32, status: Int, body: [UInt8], on connection: H2ServerConnection) {
        switch self {
        case .field(let field):
            connection.respond(streamID: streamID, status: status, field: field, body: body)
        case .text(let text):
            connection.respond(streamID: streamID, status: status,
                               headers: [H2Header("apns-id", text, indexing: .neverIndexed)], body: body)
        }
    }
}
