/// Hand-written JSON output for the hot path: strings escaped per RFC 8259 (quote, backslash and
/// every control character; non-ASCII passed through as UTF-8), integers, fixed-point decimals.
public enum JSONText {
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `value` as a quoted JSON string.
    public static func appendString(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { appendString(utf8: $0, to: &out) }
    }

    /// Text given as bytes (a CSV field): ASCII as is, anything else decoded as UTF-8 first (invalid
    /// sequences become U+FFFD, as `String(decoding:as:)` does), so every line stays valid UTF-8.
    public static func appendString(bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        bytes.withUnsafeBufferPointer { appendStringContent($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// What goes between a string's quotes for text given as bytes, decoded as `appendString(bytes:)` says.
    static func appendStringContent(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            appendContent(utf8: bytes, to: &out)
        } else {
            var text = String(decoding: bytes, as: UTF8.self)
            text.withUTF8 { appendContent(utf8: $0, to: &out) }
        }
    }

    private static func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendContent(utf8: bytes, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func appendContent(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            runStart = index + 1
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            default:
                out.append(contentsOf: Array(#"\u00"#.utf8))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
    }

    /// Appends `value` as a quoted JSON string, or `null`.
    public static func appendOptionalString(_ value: String?, to out: inout [UInt8]) {
        if let value { appendString(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    /// Appends `value` in decimal, without allocating.
    public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        JSONLineBuffer.append(to: &out, capacity: JSONLineBuffer.integerBytes) { $0.integer(value) }
    }

    /// Appends text known at compile time with one copy.
    @inline(__always)
    public static func appendLiteral(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// A duration in ms rounded to microseconds, trailing zeros dropped, at least one decimal: `3.1`, `0.25`, `5.0`.
    public static func appendMilliseconds(_ value: Double, to out: inout [UInt8]) {
        JSONLineBuffer.append(to: &out, capacity: JSONLineBuffer.millisecondsBytes) { $0.milliseconds(value) }
    }

    /// A decimal with up to three places, for summary numbers (rates, seconds).
    public static func appendDecimal(_ value: Double, to out: inout [UInt8]) { appendMilliseconds(value, to: &out) }
}
