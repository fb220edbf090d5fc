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
    /// Read for every answer of Apple's sandbox: a table look-up per digit, validity gathered in
    /// one OR and tested once (callgrind: ~410 -> ~150 instructions an id).
    public init?(text bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == 36, bytes[8] == 0x2D, bytes[13] == 0x2D, bytes[18] == 0x2D, bytes[23] == 0x2D else { return nil }
        let parsed: (UInt64, UInt64, UInt8) = Self.nibbles.withUnsafeBufferPointer { table in
            var high: UInt64 = 0, low: UInt64 = 0, invalid: UInt8 = 0
            @inline(__always) func take(_ range: Range<Int>, into word: inout UInt64) {
                for index in range {
                    let nibble = table[Int(bytes[index])]
                    invalid |= nibble
                    word = word << 4 | UInt64(nibble & 0x0F)
                }
            }
            take(0..<8, into: &high)
            take(9..<13, into: &high)
            take(14..<18, into: &high)
            take(19..<23, into: &low)
            take(24..<36, into: &low)
            return (high, low, invalid)
        }
        guard parsed.2 & 0x80 == 0 else { return nil }
        self.init(high: parsed.0, low: parsed.1)
    }

    /// A byte's hex value, or 0x80 (with any low bits) for a byte that is no hex digit.
    private static let nibbles: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) &- UInt8(ascii: "A") &+ 10
        default: 0x80
        }
    }

    /// The UUID spelled `text`; nil for anything else.
    public init?(_ text: String) {
        var text = text
        guard let value = text.withUTF8({ UUIDBytes(text: $0) }) else { return nil }
        self = value
    }

    /// Calls `body` with the 36-character lowercase text (valid only during the call; no allocation).
    public func withText<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        var text = InlineArray<36, UInt8>(repeating: UInt8(ascii: "-"))
        Self.digitPairs.withUnsafeBufferPointer { pairs in
            // Two digits a byte, from a table of the 256 bytes' pairs; a dash after bytes 4, 6, 8, 10.
            var position = 0
            for byteIndex in 0..<16 {
                if byteIndex == 4 || byteIndex == 6 || byteIndex == 8 || byteIndex == 10 { position += 1 }
                let word = byteIndex < 8 ? high : low
                let byte = Int(truncatingIfNeeded: word >> UInt64(56 - (byteIndex % 8) * 8) & 0xFF)
                let pair = pairs[byte]
                text[position] = UInt8(truncatingIfNeeded: pair >> 8)
                text[position + 1] = UInt8(truncatingIfNeeded: pair)
                position += 2
            }
        }
        return text.span.withUnsafeBufferPointer { body($0) }
    }

    /// Each byte's two lowercase hex digits, the first in the high byte.
    private static let digitPairs: [UInt16] = (0...255).map { byte in
        let digits = Array("0123456789abcdef".utf8)
        return UInt16(digits[byte >> 4]) << 8 | UInt16(digits[byte & 0xF])
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
