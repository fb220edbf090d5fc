import ByteScan
/// The kind of a JSON value, known from its first byte.
public enum JSONValueKind: UInt8, Sendable, Hashable {
    case object, array, string, number, boolean, null
}

/// One member of a JSON object as a walk meets it, read in place: its key's text and where its
/// value starts.
struct JSONMember {
    /// The key's text between its quotes, escapes not yet decoded.
    let key: Range<Int>
    /// Whether the key holds an escape (`\`), so that its bytes are not its text.
    let keyIsEscaped: Bool
    /// The index of the value's first byte.
    let valueStart: Int
    let kind: JSONValueKind
}

/// Reads the members of JSON objects that `JSONValidator` accepted, in place and without
/// allocating: the keys a rule looks for are compared as bytes, every other value is skipped
/// (the plain text of strings a block at a time, as `JSONScanner` does).
///
/// Bytes that are not valid JSON never make it read out of bounds, but what it answers for them
/// means nothing: validate first.
struct JSONMembers {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Walks the object whose `{` is at `start`, calling `visit` with each member in order (a key
    /// given twice is met twice: the last one is what a decoder keeps). `visit` returns past the
    /// value's last byte when it read the value itself (an object it walked in turn), or nil to
    /// have it skipped here: so each byte is read once. Returns past the object's `}`, or nil when
    /// the bytes end or break before it (the members met until then were visited).
    @inline(__always)
    func walkObject(at start: Int, _ visit: (JSONMember) -> Int?) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return nil }
        var i = skipWhitespace(from: start + 1)
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { return i + 1 }
        while i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let (keyEnd, escaped) = stringEnd(from: i)
            guard keyEnd <= bytes.count else { return nil }
            let key = (i + 1)..<(keyEnd - 1)
            i = skipWhitespace(from: keyEnd)
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i = skipWhitespace(from: i + 1)
            guard i < bytes.count, let kind = Self.kind(of: bytes[i]) else { return nil }
            let end = visit(JSONMember(key: key, keyIsEscaped: escaped, valueStart: i, kind: kind))
                ?? valueEnd(from: i, kind: kind)
            guard end <= bytes.count else { return nil }
            i = skipWhitespace(from: end)
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "}") { return i + 1 }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i = skipWhitespace(from: i + 1)
        }
        return nil
    }

    /// The string value whose opening quote is at `start`: its text without the quotes, whether
    /// that holds an escape, and past its closing quote (past the end of the bytes when cut).
    func string(at start: Int) -> (text: Range<Int>, escaped: Bool, end: Int) {
        let (end, escaped) = stringEnd(from: start)
        return ((start + 1)..<max(start + 1, min(end, bytes.count + 1) - 1), escaped, end)
    }

    /// The index of the top-level object's `{` (after any whitespace), or nil.
    var topLevelObject: Int? {
        let i = skipWhitespace(from: 0)
        return i < bytes.count && bytes[i] == UInt8(ascii: "{") ? i : nil
    }

    /// Whether the string at `range` (a key's text, or a string value without its quotes) is
    /// `text`, escapes decoded.
    func string(_ range: Range<Int>, escaped: Bool, equals text: StaticString) -> Bool {
        withText(range, escaped: escaped) { Self.equal($0, text) } ?? false
    }

    /// `body` called with the text of the string at `range` (a key's, or a string value's without
    /// its quotes): its bytes in place, or its escapes decoded (an allocation, for the rare string
    /// that has one); nil for a broken escape.
    @inline(__always)
    func withText<Result>(_ range: Range<Int>, escaped: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        guard escaped else { return body(raw) }
        return JSONStringText.decode(raw)?.withUnsafeBufferPointer(body)
    }

    /// Whether `text` is `name`, byte for byte: a word (8 or 4 bytes) at a time, the last word
    /// ending at the name's end (it overlaps the one before when the length is not a multiple).
    @inline(__always)
    static func equal(_ text: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard text.count == count else { return false }
        guard let base = UnsafeRawPointer(text.baseAddress) else { return count == 0 }
        let wanted = UnsafeRawPointer(name.utf8Start)
        switch count {
        case 8...:
            var k = 0
            while k < count &- 8 {
                if base.loadUnaligned(fromByteOffset: k, as: UInt64.self) != wanted.loadUnaligned(fromByteOffset: k, as: UInt64.self) {
                    return false
                }
                k &+= 8
            }
            return base.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
                == wanted.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        case 4..<8:
            return base.loadUnaligned(as: UInt32.self) == wanted.loadUnaligned(as: UInt32.self)
                && base.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
                    == wanted.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
        default:
            var k = 0
            while k < count {
                if text[k] != wanted.load(fromByteOffset: k, as: UInt8.self) { return false }
                k &+= 1
            }
            return true
        }
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

    @inline(__always)
    private func skipWhitespace(from start: Int) -> Int {
        // Most often there is none: one test, then the loop.
        if start < bytes.count && bytes[start] > 0x20 { return start }
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
    /// it never closes), and whether it holds an escape. A key or a short value ends in the 16
    /// bytes after its quote: found here with one block test (`NativeBlocks`), without a call.
    @inline(__always)
    private func stringEnd(from start: Int) -> (end: Int, escaped: Bool) {
        let i = start &+ 1
        if bytes.count &- i >= 16, let base = UnsafeRawPointer(bytes.baseAddress) {
            let stops = NativeBlocks.equal(NativeBlocks.load(base + i), UInt8(ascii: "\""), or: UInt8(ascii: "\\"))
            if !NativeBlocks.isEmpty(stops) {
                let k = i &+ NativeBlocks.first(stops)
                if base.load(fromByteOffset: k, as: UInt8.self) == UInt8(ascii: "\"") { return (k &+ 1, false) }
            }
        }
        return stringEndRest(from: start)
    }

    /// `stringEnd` for a string with an escape or past its first block: looks for `"` and `\`
    /// 16 bytes a step, then byte by byte in the buffer's last 15 bytes.
    private func stringEndRest(from start: Int) -> (end: Int, escaped: Bool) {
        var i = start + 1
        var escaped = false
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            while bytes.count &- i >= 16 {
                let stops = NativeBlocks.equal(NativeBlocks.load(base + i), UInt8(ascii: "\""), or: UInt8(ascii: "\\"))
                if NativeBlocks.isEmpty(stops) {
                    i &+= 16
                    continue
                }
                i &+= NativeBlocks.first(stops)
                if base.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "\"") { return (i + 1, escaped) }
                escaped = true
                i &+= 2
            }
        }
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
        case .number:
            // Digits are most of a number (a timestamp's ten): one test each.
            var i = start
            while i < bytes.count {
                let c = bytes[i]
                guard c &- UInt8(ascii: "0") < 10 || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                    || c == UInt8(ascii: ".") || c | 0x20 == UInt8(ascii: "e") else { return i }
                i &+= 1
            }
            return i
        case .boolean, .null:
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
