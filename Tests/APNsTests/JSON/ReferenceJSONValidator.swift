@testable import APNs

// The validator as it was before its scanner was tuned (commit c629009), kept word for word as
// the reference the differential test holds the tuned one to: same verdicts, same error kinds and
// offsets.
enum ReferenceJSONValidator {
    /// Why `bytes` is not a JSON object, or nil when it is one.
    static func validate(_ bytes: some Collection<UInt8>) -> JSONError? {
        if let result = bytes.withContiguousStorageIfAvailable({ validate(buffer: $0) }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { validate(buffer: $0) }
    }

    /// Whether `bytes` is exactly one JSON object.
    static func isJSONObject(_ bytes: some Collection<UInt8>) -> Bool {
        validate(bytes) == nil
    }

    static func validate(buffer: UnsafeBufferPointer<UInt8>) -> JSONError? {
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: Limits.jsonDepth) { stack in
            var scanner = ReferenceJSONScanner(bytes: buffer, isObject: stack)
            return scanner.run()
        }
    }
}

private enum ReferenceScanState {
    case value, valueOrArrayEnd, key, keyOrObjectEnd, colon, afterValue
}

private struct ReferenceJSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let isObject: UnsafeMutableBufferPointer<Bool>
    var i = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, isObject: UnsafeMutableBufferPointer<Bool>) {
        self.bytes = bytes
        self.isObject = isObject
    }

    mutating func run() -> JSONError? {
        skipWhitespace()
        guard i < bytes.count else { return fail(.empty) }
        guard bytes[i] == UInt8(ascii: "{") else { return fail(.notAnObject) }
        var state = ReferenceScanState.value
        while true {
            skipWhitespace()
            guard i < bytes.count else {
                return state == .afterValue && depth == 0 ? nil : fail(.unexpectedEnd)
            }
            let c = bytes[i]
            switch state {
            case .afterValue:
                guard depth > 0 else { return fail(.trailingData) }
                let inObject = isObject[depth - 1]
                if c == UInt8(ascii: ",") {
                    i += 1
                    state = inObject ? .key : .value
                } else if c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    i += 1
                    depth -= 1
                } else {
                    return fail(.unexpectedByte)
                }
            case .colon:
                guard c == UInt8(ascii: ":") else { return fail(.unexpectedByte) }
                i += 1
                state = .value
            case .key, .keyOrObjectEnd:
                if c == UInt8(ascii: "\"") {
                    if let error = string() { return error }
                    state = .colon
                } else if c == UInt8(ascii: "}") && state == .keyOrObjectEnd {
                    i += 1
                    depth -= 1
                    state = .afterValue
                } else {
                    return fail(.unexpectedByte)
                }
            case .value, .valueOrArrayEnd:
                if let error = value(c, state: &state) { return error }
            }
        }
    }

    /// Starts or reads the value whose first byte is `c`.
    mutating func value(_ c: UInt8, state: inout ReferenceScanState) -> JSONError? {
        switch c {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < isObject.count else { return fail(.tooDeep) }
            let object = c == UInt8(ascii: "{")
            isObject[depth] = object
            depth += 1
            i += 1
            state = object ? .keyOrObjectEnd : .valueOrArrayEnd
            return nil
        case UInt8(ascii: "]") where state == .valueOrArrayEnd:
            i += 1
            depth -= 1
        case UInt8(ascii: "\""):
            if let error = string() { return error }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let error = number() { return error }
        case UInt8(ascii: "t"):
            if let error = literal("true") { return error }
        case UInt8(ascii: "f"):
            if let error = literal("false") { return error }
        case UInt8(ascii: "n"):
            if let error = literal("null") { return error }
        default:
            return fail(.unexpectedByte)
        }
        state = .afterValue
        return nil
    }

    mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): i += 1
            default: return
            }
        }
    }

    /// Reads a string from its opening quote to past its closing quote.
    mutating func string() -> JSONError? {
        i += 1
        while i < bytes.count {
            // Plain ASCII is most of a payload: skip it eight bytes at a time, then byte by byte.
            skipPlainWords()
            while i < bytes.count, bytes[i] >= 0x20, bytes[i] < 0x80,
                  bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") {
                i += 1
            }
            guard i < bytes.count else { break }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return nil
            } else if c == UInt8(ascii: "\\") {
                if let error = escape() { return error }
            } else if c < 0x20 {
                return fail(.controlCharacterInString)
            } else if c < 0x80 {
                i += 1
            } else if let error = utf8Sequence() {
                return error
            }
        }
        return fail(.unexpectedEnd)
    }

    /// Advances over whole 8-byte words of printable ASCII other than `"` and `\`, testing all
    /// eight bytes at once (the classic "has a byte less than n" and "has a zero byte" tricks).
    mutating func skipPlainWords() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let control = (word &- ones &* 0x20) & ~word & highs
            let quote = ((word ^ (ones &* 0x22)) &- ones) & ~(word ^ (ones &* 0x22)) & highs
            let backslash = ((word ^ (ones &* 0x5C)) &- ones) & ~(word ^ (ones &* 0x5C)) & highs
            if (control | quote | backslash | (word & highs)) != 0 { return }
            i += 8
        }
    }

    mutating func escape() -> JSONError? {
        guard i + 1 < bytes.count else { return fail(.unexpectedEnd) }
        switch bytes[i + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            i += 2
            return nil
        case UInt8(ascii: "u"):
            break
        default:
            return fail(.invalidEscape)
        }
        let start = i
        guard let unit = codeUnit(at: i + 2) else { return fail(.invalidEscape) }
        i += 6
        switch unit {
        case 0xD800...0xDBFF:
            let followedByLowHalf = i + 1 < bytes.count
                && bytes[i] == UInt8(ascii: "\\") && bytes[i + 1] == UInt8(ascii: "u")
                && (0xDC00...0xDFFF).contains(codeUnit(at: i + 2) ?? 0)
            guard followedByLowHalf else { i = start; return fail(.loneSurrogate) }
            i += 6
        case 0xDC00...0xDFFF:
            i = start
            return fail(.loneSurrogate)
        default:
            break
        }
        return nil
    }

    /// The 4 hex digits at `offset` as a UTF-16 code unit; nil when cut short or not hex.
    func codeUnit(at offset: Int) -> UInt16? {
        guard offset + 4 <= bytes.count else { return nil }
        var unit: UInt16 = 0
        for k in offset..<offset + 4 {
            guard let nibble = hexValue(bytes[k]) else { return nil }
            unit = unit << 4 | UInt16(nibble)
        }
        return unit
    }

    /// Reads one multi-byte UTF-8 character (Unicode 15 table 3-7: well-formed sequences).
    mutating func utf8Sequence() -> JSONError? {
        let lead = bytes[i]
        var continuation = 0
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: continuation = 1
        case 0xE0: continuation = 2; low = 0xA0  // below is overlong
        case 0xE1...0xEC, 0xEE...0xEF: continuation = 2
        case 0xED: continuation = 2; high = 0x9F  // above is a surrogate
        case 0xF0: continuation = 3; low = 0x90  // below is overlong
        case 0xF1...0xF3: continuation = 3
        case 0xF4: continuation = 3; high = 0x8F  // above is past U+10FFFF
        default: return fail(.invalidUTF8)  // stray continuation, overlong C0/C1, F5...FF
        }
        guard i + continuation < bytes.count else { return fail(.invalidUTF8) }
        guard (low...high).contains(bytes[i + 1]) else { return fail(.invalidUTF8) }
        var k = 2
        while k <= continuation {
            guard (0x80...0xBF).contains(bytes[i + k]) else { return fail(.invalidUTF8) }
            k += 1
        }
        i += continuation + 1
        return nil
    }

    /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func number() -> JSONError? {
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { return fail(.invalidNumber) }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count && isDigit(bytes[i]) { return fail(.invalidNumber) }
        } else {
            skipDigits()
        }
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { return fail(.invalidNumber) }
            skipDigits()
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) {
                i += 1
            }
            guard i < bytes.count, isDigit(bytes[i]) else { return fail(.invalidNumber) }
            skipDigits()
        }
        return nil
    }

    mutating func skipDigits() {
        while i < bytes.count && isDigit(bytes[i]) { i += 1 }
    }

    func isDigit(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    mutating func literal(_ word: StaticString) -> JSONError? {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { return fail(.unexpectedEnd) }
        let matches = word.withUTF8Buffer { expected in
            var k = 0
            while k < count {
                if bytes[i + k] != expected[k] { return false }
                k += 1
            }
            return true
        }
        guard matches else { return fail(.unexpectedByte) }
        i += count
        return nil
    }

    func fail(_ kind: JSONError.Kind) -> JSONError {
        JSONError(kind: kind, offset: i)
    }
}
