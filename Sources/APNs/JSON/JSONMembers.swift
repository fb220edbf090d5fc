/// The kind of a JSON value, known from its first byte.
public enum JSONValueKind: UInt8, Sendable, Hashable {
    case object, array, string, number, boolean, null
}

/// One member of a JSON object, read in place: where its key's text and its value lie in the bytes.
struct JSONMember {
    /// The key's text between its quotes, escapes not yet decoded.
    let key: Range<Int>
    /// Whether the key holds an escape (`\`), so that its bytes are not its text.
    let keyIsEscaped: Bool
    /// The value, from its first byte to its last (a string with its quotes).
    let value: Range<Int>
    let kind: JSONValueKind
}

/// Reads the members of JSON objects that `JSONValidator` accepted, in place and without
/// allocating: the keys a rule looks for are compared as bytes, every other value is skipped.
///
/// Bytes that are not valid JSON never make it read out of bounds, but what it answers for them
/// means nothing: validate first.
struct JSONMembers {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Calls `body` with each member of the object whose `{` is at `start`, in order (a key given
    /// twice is met twice: the last one is what a decoder keeps).
    func forEach(inObjectAt start: Int, _ body: (JSONMember) -> Void) {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return }
        var i = skipWhitespace(from: start + 1)
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { return }
        while i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let (keyEnd, escaped) = stringEnd(from: i)
            guard keyEnd <= bytes.count else { return }
            let key = (i + 1)..<(keyEnd - 1)
            i = skipWhitespace(from: keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return }
            i = skipWhitespace(from: i + 1)
            guard i < bytes.count, let kind = Self.kind(of: bytes[i]) else { return }
            let end = valueEnd(from: i, kind: kind)
            guard end <= bytes.count else { return }
            body(JSONMember(key: key, keyIsEscaped: escaped, value: i..<end, kind: kind))
            i = skipWhitespace(from: end)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return }
            i = skipWhitespace(from: i + 1)
        }
    }

    /// The index of the top-level object's `{` (after any whitespace), or nil.
    var topLevelObject: Int? {
        let i = skipWhitespace(from: 0)
        return i < bytes.count && bytes[i] == UInt8(ascii: "{") ? i : nil
    }

    /// Whether the string at `range` (a key's text, or a string value without its quotes) is
    /// `text`, escapes decoded.
    func string(_ range: Range<Int>, escaped: Bool, equals text: StaticString) -> Bool {
        guard escaped else {
            guard range.count == text.utf8CodeUnitCount else { return false }
            return text.withUTF8Buffer { wanted in
                var k = 0
                while k < range.count {
                    if bytes[range.lowerBound + k] != wanted[k] { return false }
                    k += 1
                }
                return true
            }
        }
        guard let decoded = JSONStringText.decode(UnsafeBufferPointer(rebasing: bytes[range])) else { return false }
        return text.withUTF8Buffer { decoded.elementsEqual($0) }
    }

    /// A string value's text without its quotes, and whether it holds an escape.
    func stringContent(_ member: JSONMember) -> (range: Range<Int>, escaped: Bool) {
        let range = (member.value.lowerBound + 1)..<(member.value.upperBound - 1)
        return (range, UnsafeBufferPointer(rebasing: bytes[range]).contains(UInt8(ascii: "\\")))
    }

    static func kind(of first: UInt8) -> JSONValueKind? {
        switch first {
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): .boolean
        case UInt8(ascii: "n"): .null
        default: nil
        }
    }

    private func skipWhitespace(from start: Int) -> Int {
        var i = start
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): i += 1
            default: return i
            }
        }
        return i
    }

    /// Past the closing quote of the string whose opening quote is at `start` (past the end when
    /// it never closes), and whether it holds an escape.
    private func stringEnd(from start: Int) -> (end: Int, escaped: Bool) {
        var i = start + 1
        var escaped = false
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""): return (i + 1, escaped)
            case UInt8(ascii: "\\"): escaped = true; i += 2
            default: i += 1
            }
        }
        return (bytes.count + 1, escaped)
    }

    /// Past the last byte of the value of `kind` that starts at `start` (past the end when cut).
    private func valueEnd(from start: Int, kind: JSONValueKind) -> Int {
        switch kind {
        case .string:
            return stringEnd(from: start).end
        case .object, .array:
            var depth = 0
            var i = start
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    i = stringEnd(from: i).end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return bytes.count + 1
        case .number, .boolean, .null:
            var i = start
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"),
                     UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    return i
                default:
                    i += 1
                }
            }
            return i
        }
    }
}

/// A JSON string's text with its escapes decoded, for the rare key or value that has one.
enum JSONStringText {
    /// The UTF-8 of the string whose text (without quotes) is `raw`; nil for a broken escape.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let c = raw[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < raw.count else { return nil }
            switch raw[i + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(raw[i + 1])
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = codeUnit(raw, at: i + 2) else { return nil }
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 7 < raw.count, raw[i + 6] == UInt8(ascii: "\\"), raw[i + 7] == UInt8(ascii: "u"),
                          let low = codeUnit(raw, at: i + 8), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                guard let character = Unicode.Scalar(scalar) else { return nil }
                UTF8.encode(character) { out.append($0) }
                i += 4
            default:
                return nil
            }
            i += 2
        }
        return out
    }

    private static func codeUnit(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32? {
        guard offset + 4 <= raw.count else { return nil }
        var unit: UInt32 = 0
        for k in offset..<offset + 4 {
            guard let nibble = hexValue(raw[k]) else { return nil }
            unit = unit << 4 | UInt32(nibble)
        }
        return unit
    }
}
