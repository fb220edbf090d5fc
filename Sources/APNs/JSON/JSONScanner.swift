import ByteScan
/// Where `JSONScanner` is in the grammar: what the next byte (after whitespace) may be.
enum JSONScanState {
    case value, valueOrArrayEnd, key, keyOrObjectEnd, colon, afterValue
}

/// `JSONValidator`'s one pass over the bytes: a state machine with the nesting stack it is given,
/// skipping the plain bytes of strings a block at a time with `Blocks` (see `ByteBlocks`), and
/// telling `observer` the keys and values it meets (`NoJSONObserver` for most payloads).
struct JSONScanner<Blocks: ByteBlocks, Observer: JSONScanObserver> {
    let bytes: UnsafeBufferPointer<UInt8>
    let isObject: UnsafeMutableBufferPointer<Bool>
    var i = 0
    var depth = 0
    var observer: Observer

    init(bytes: UnsafeBufferPointer<UInt8>, isObject: UnsafeMutableBufferPointer<Bool>, observer: Observer) {
        self.bytes = bytes
        self.isObject = isObject
        self.observer = observer
    }

    mutating func run() -> JSONError? {
        skipWhitespace()
        guard i < bytes.count else { return fail(.empty) }
        guard bytes[i] == UInt8(ascii: "{") else { return fail(.notAnObject) }
        var state = JSONScanState.value
        while true {
            guard i < bytes.count else {
                return state == .afterValue && depth == 0 ? nil : fail(.unexpectedEnd)
            }
            var c = bytes[i]
            // Whitespace is at most 0x20, and rare in a payload: skipped only where it may be.
            if c <= 0x20 {
                skipWhitespace()
                guard i < bytes.count else {
                    return state == .afterValue && depth == 0 ? nil : fail(.unexpectedEnd)
                }
                c = bytes[i]
            }
            switch state {
            case .afterValue:
                guard depth > 0 else { return fail(.trailingData) }
                let inObject = isObject[depth - 1]
                if c == UInt8(ascii: ",") {
                    i += 1
                    state = inObject ? .key : .value
                } else if c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    i &+= 1
                    depth &-= 1
                    // A payload ends in a run of closing brackets: taken here, not a turn each.
                    while depth > 0 && i < bytes.count
                        && bytes[i] == (isObject[depth &- 1] ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i &+= 1
                        depth &-= 1
                    }
                } else {
                    return fail(.unexpectedByte)
                }
            case .colon:
                guard c == UInt8(ascii: ":") else { return fail(.unexpectedByte) }
                i += 1
                state = .value
            case .key, .keyOrObjectEnd:
                if c == UInt8(ascii: "\"") {
                    let start = i
                    if let error = string() { return error }
                    observer.key(from: start &+ 1, to: i &- 1, depth: depth)
                    // The colon usually follows the key at once: taken here, not in another turn.
                    if i < bytes.count && bytes[i] == UInt8(ascii: ":") {
                        i += 1
                        state = .value
                        // And so, most often, does its value (no whitespace before it): started here.
                        if i < bytes.count && bytes[i] > 0x20, let error = value(bytes[i], state: &state) { return error }
                    } else {
                        state = .colon
                    }
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
    @inline(__always)
    mutating func value(_ c: UInt8, state: inout JSONScanState) -> JSONError? {
        switch c {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < isObject.count else { return fail(.tooDeep) }
            let object = c == UInt8(ascii: "{")
            observer.value(object ? .object : .array, depth: depth)
            isObject[depth] = object
            depth += 1
            i += 1
            state = object ? .keyOrObjectEnd : .valueOrArrayEnd
            return nil
        case UInt8(ascii: "]") where state == .valueOrArrayEnd:
            i += 1
            depth -= 1
        case UInt8(ascii: "\""):
            let start = i
            if let error = string() { return error }
            observer.string(from: start &+ 1, to: i &- 1, depth: depth)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            observer.value(.number, depth: depth)
            if let error = number() { return error }
        case UInt8(ascii: "t"):
            observer.value(.boolean, depth: depth)
            if let error = literal("true") { return error }
        case UInt8(ascii: "f"):
            observer.value(.boolean, depth: depth)
            if let error = literal("false") { return error }
        case UInt8(ascii: "n"):
            observer.value(.null, depth: depth)
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
    @inline(__always)
    mutating func string() -> JSONError? {
        i &+= 1
        // Keys and short values end in the next block: find that end here, without a call.
        if bytes.count &- i >= 16, let base = UnsafeRawPointer(bytes.baseAddress) {
            let stops = Blocks.plainTextStops(Blocks.load(base + i))
            if Blocks.isEmpty(stops) {
                i &+= 16
            } else {
                i &+= Blocks.first(stops)
                if base.load(fromByteOffset: i, as: UInt8.self) == UInt8(ascii: "\"") {
                    i &+= 1
                    return nil
                }
            }
        }
        return stringRest()
    }

    /// Reads the rest of a string, from `i` to past its closing quote. (Not inlined in `string`:
    /// `run` then grew past what the optimizer inlines, and cost more.)
    mutating func stringRest() -> JSONError? {
        while true {
            skipPlain()
            guard i < bytes.count else { return fail(.unexpectedEnd) }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                return nil
            } else if c == UInt8(ascii: "\\") {
                observer.escape()
                if let error = escape() { return error }
            } else if c < 0x20 {
                return fail(.controlCharacterInString)
            } else if let error = utf8Sequence() {
                return error
            }
        }
    }

    /// Advances to the first byte that is not printable ASCII other than `"` and `\`, or to the
    /// end. Plain ASCII is most of a payload, so it goes two blocks (32 bytes) a step with one
    /// branch, then a block, a word (8 bytes), and byte by byte for the last few bytes of the buffer.
    /// Inlined in `stringRest`, its one caller: a call each time cost more than its loop.
    @inline(__always)
    mutating func skipPlain() {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return }
        var k = i
        let end = bytes.count
        while end &- k >= 32 {
            let first = Blocks.plainTextStops(Blocks.load(base + k))
            let second = Blocks.plainTextStops(Blocks.load(base + (k &+ 16)))
            if !Blocks.isEmpty(Blocks.union(first, second)) {
                i = k &+ (Blocks.isEmpty(first) ? 16 &+ Blocks.first(second) : Blocks.first(first))
                return
            }
            k &+= 32
        }
        if end &- k >= 16 {
            let stops = Blocks.plainTextStops(Blocks.load(base + k))
            if !Blocks.isEmpty(stops) {
                i = k &+ Blocks.first(stops)
                return
            }
            k &+= 16
        }
        if end &- k >= 8 {
            let word = SWAR.plainTextStops(SWAR.load(base + k))
            if word != 0 {
                i = k &+ word.trailingZeroBitCount &>> 3
                return
            }
            k &+= 8
        }
        while k < end {
            let c = base.load(fromByteOffset: k, as: UInt8.self)
            if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { break }
            k &+= 1
        }
        i = k
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
        guard i &+ continuation < bytes.count else { return fail(.invalidUTF8) }
        let second = bytes[i &+ 1]
        guard second >= low && second <= high else { return fail(.invalidUTF8) }
        var k = 2
        while k <= continuation {
            guard bytes[i &+ k] & 0xC0 == 0x80 else { return fail(.invalidUTF8) }
            k &+= 1
        }
        i &+= continuation &+ 1
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
