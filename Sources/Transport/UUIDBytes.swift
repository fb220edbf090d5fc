/// A UUID as its 16 bytes, for APNs' `apns-unique-id` response header: a record carries the id only
/// when it is one (anything else is ignored, not written into records), and 16 bytes travel from
/// nghttp2's callback to the result log cheaper than the 36-byte text. Written back lowercase, the
/// canonical spelling (RFC 9562; UUIDs compare without regard to case).
public struct UUIDBytes: Sendable, Hashable, CustomStringConvertible {
    /// The first eight bytes, most significant first.
    public let high: UInt64
    /// The last eight bytes.
    public let low: UInt64

    /// The UUID of these two words.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The nil UUID (all bits zero): no one's id.
    public var isNil: Bool { high == 0 && low == 0 }

    /// The UUID spelled `bytes` (8-4-4-4-12 hex digits, either case); nil for anything else.
    public init?(text bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for index in 0..<36 {
            let byte = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = Self.nibble(byte) else { return nil }
            if digits < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
            digits += 1
        }
        self.init(high: high, low: low)
    }

    /// The UUID spelled `text`; nil for anything else.
    public init?(_ text: String) {
        var text = text
        guard let value = text.withUTF8({ UUIDBytes(text: $0) }) else { return nil }
        self = value
    }

    private static func nibble(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte &- UInt8(ascii: "a") &+ 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(byte &- UInt8(ascii: "A") &+ 10)
        default: nil
        }
    }

    /// Calls `body` with the 36-character lowercase text (valid only during the call; no allocation).
    public func withText<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        var text = InlineArray<36, UInt8>(repeating: UInt8(ascii: "-"))
        var position = 0
        for digit in 0..<32 {
            if digit == 8 || digit == 12 || digit == 16 || digit == 20 { position += 1 }
            let word = digit < 16 ? high : low
            let shift = UInt64(60 - (digit % 16) * 4)
            text[position] = table[Int(truncatingIfNeeded: word >> shift & 0xf)]
            position += 1
        }
        return text.span.withUnsafeBufferPointer { body($0) }
    }

    /// Appends the 36-character lowercase text to `out`.
    public func append(to out: inout [UInt8]) {
        withText { out.append(contentsOf: $0) }
    }

    /// The 36-character lowercase text.
    public var description: String {
        withText { String(decoding: $0, as: UTF8.self) }
    }
}
