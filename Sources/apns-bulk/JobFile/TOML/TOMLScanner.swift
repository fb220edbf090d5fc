/// The bytes of a job file under a cursor that knows its line: blanks, comments, line ends, keys,
/// and the errors that point at where the cursor stands, then (in extensions below) the strings
/// and the bare values. `TOMLReader` builds the document from it.
struct TOMLScanner {
    let bytes: [UInt8]
    var position = 0
    private(set) var line = 1
    private var lineStart = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
        // A byte-order mark, as some Windows editors write one, is not part of the first line.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            position = 3
            lineStart = 3
        }
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    func peek(_ offset: Int) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    /// Whether the three bytes at the cursor are `byte` (the delimiters of multi-line strings).
    func atTriple(_ byte: UInt8) -> Bool { current == byte && peek(1) == byte && peek(2) == byte }

    /// The cursor's column in characters (1-based), for messages.
    var column: Int {
        bytes[lineStart..<min(position, bytes.count)].reduce(1) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
    }

    func error(_ reason: String, pointing: Bool = true) -> TOMLError {
        TOMLError(line: line, column: pointing ? column : nil, reason: reason, notTOML: true)
    }

    /// What stands at the cursor, for "found ..." in a message.
    var found: String {
        guard let byte = current else { return "the end of the file" }
        switch byte {
        case TOMLByte.newline, TOMLByte.carriageReturn: return "the end of the line"
        case TOMLByte.tab: return "a tab"
        case 0x20..<0x7F: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0..<0x20, 0x7F: return "a control character (U+\(TOMLByte.hex(UInt32(byte), digits: 4)))"
        default:
            var decoder = UTF8()
            var iterator = bytes[position...].makeIterator()
            if case .scalarValue(let scalar) = decoder.decode(&iterator) { return "'\(Character(scalar))'" }
            return "byte 0x\(TOMLByte.hex(UInt32(byte), digits: 2))"
        }
    }

    mutating func skipBlanks() {
        while let byte = current, byte == TOMLByte.space || byte == TOMLByte.tab { position += 1 }
    }

    /// Moves past the line end at the cursor (LF or CRLF); false when there is none.
    mutating func skipNewline() throws(TOMLError) -> Bool {
        if current == TOMLByte.carriageReturn {
            guard peek(1) == TOMLByte.newline else { throw error("a carriage return must be followed by a line feed") }
            position += 1
        }
        guard current == TOMLByte.newline else { return false }
        position += 1
        line += 1
        lineStart = position
        return true
    }

    /// Moves past a comment at the cursor, up to (not over) its line end.
    mutating func skipComment() throws(TOMLError) {
        guard current == TOMLByte.hash else { return }
        while let byte = current, byte != TOMLByte.newline {
            if byte == TOMLByte.carriageReturn, peek(1) == TOMLByte.newline { return }
            if TOMLByte.isControl(byte) { throw error("a comment cannot hold \(found)") }
            position += 1
        }
    }

    /// Blanks, comments and line ends, as between the items of an array.
    mutating func skipSpaceCommentsAndNewlines() throws(TOMLError) {
        while true {
            skipBlanks()
            try skipComment()
            if try !skipNewline() { return }
        }
    }

    /// Blanks and a comment, then the line's end or the file's: after a key's value or a header.
    mutating func expectEndOfLine(after what: String) throws(TOMLError) {
        skipBlanks()
        try skipComment()
        if current == nil { return }
        if try !skipNewline() { throw error("expected the end of the line after \(what), found \(found)") }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(TOMLError) {
        guard current == byte else { throw error("expected \(what), found \(found)") }
        position += 1
    }

    /// Whether a key can start at the cursor: a bare-key character or a quote.
    var atKey: Bool {
        guard let byte = current else { return false }
        return TOMLByte.isBareKey(byte) || byte == TOMLByte.quote || byte == TOMLByte.apostrophe
    }

    /// A key, dotted or not (`a."b.c".d`), as its parts; blanks may stand around the dots.
    mutating func key() throws(TOMLError) -> [String] {
        var parts = [try simpleKey()]
        while true {
            let before = position
            skipBlanks()
            guard current == TOMLByte.dot else {
                position = before
                return parts
            }
            position += 1
            skipBlanks()
            parts.append(try simpleKey())
        }
    }

    private mutating func simpleKey() throws(TOMLError) -> String {
        guard let byte = current else { throw error("expected a key, found \(found)") }
        if byte == TOMLByte.quote || byte == TOMLByte.apostrophe {
            if atTriple(byte) { throw error("a key cannot be a multi-line string") }
            return try oneLineString()
        }
        let start = position
        while let byte = current, TOMLByte.isBareKey(byte) { position += 1 }
        guard position > start else {
            throw error("expected a key (a name of letters, digits, '-' and '_', or a quoted name), found \(found)")
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }
}

/// Where something started, for the errors found after the cursor has moved past it (a number's
/// word, an escape's digits).
struct TOMLSite {
    var line: Int
    var column: Int

    func error(_ reason: String) -> TOMLError { TOMLError(line: line, column: column, reason: reason, notTOML: true) }
}

/// The bytes TOML's grammar names.
enum TOMLByte {
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let hash = UInt8(ascii: "#")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let backslash = UInt8(ascii: "\\")
    static let dot = UInt8(ascii: ".")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")

    static func isBareKey(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The control characters TOML allows in no string or comment (a tab is allowed).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != tab) || byte == 0x7F }

    /// `value` in upper-case hexadecimal, zero-padded to `digits`: U+0001, 0xFF.
    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// TOML's four kinds of string: basic ("..." with escapes), literal ('...' as written), and the
/// multi-line form of each ("""...""", '''...''').
extension TOMLScanner {
    /// The string whose first quote is at the cursor.
    mutating func string() throws(TOMLError) -> String {
        guard let quote = current else { throw error("expected a string, found \(found)") }
        return atTriple(quote) ? try multiLineString() : try oneLineString()
    }

    /// A one-line string ("..." or '...'), the cursor on its quote.
    mutating func oneLineString() throws(TOMLError) -> String {
        guard let quote = current else { throw error("expected a string, found \(found)") }
        let basic = quote == TOMLByte.quote
        position += 1
        var text: [UInt8] = []
        while true {
            guard let byte = current, byte != TOMLByte.newline, byte != TOMLByte.carriageReturn else {
                throw error(basic
                    ? "a string in \"...\" must end on its own line (a string of several lines goes in \"\"\"...\"\"\"), found \(found)"
                    : "a string in '...' must end on its own line (a string of several lines goes in '''...'''), found \(found)")
            }
            if byte == quote {
                position += 1
                return String(decoding: text, as: UTF8.self)
            }
            if basic, byte == TOMLByte.backslash {
                try escape(into: &text)
                continue
            }
            if TOMLByte.isControl(byte) { throw error("a string cannot hold \(found); write it as an escape such as \\t or \\u0001") }
            text.append(byte)
            position += 1
        }
    }

    /// A multi-line string, the cursor on its first of three quotes. A line end right after the
    /// opening quotes is not part of it; line ends inside are read as "\n".
    private mutating func multiLineString() throws(TOMLError) -> String {
        guard let quote = current else { throw error("expected a string, found \(found)") }
        let basic = quote == TOMLByte.quote
        let delimiter = basic ? "\"\"\"" : "'''"
        let opened = (line: line, column: column)
        position += 3
        _ = try skipNewline()
        var text: [UInt8] = []
        while true {
            guard let byte = current else {
                throw TOMLError(line: opened.line, column: opened.column,
                                reason: "the string opened with \(delimiter) has no closing \(delimiter)", notTOML: true)
            }
            switch byte {
            case quote:
                var run = 1
                while peek(run) == quote { run += 1 }
                // Up to two quotes may stand right before the closing three ("""say "hi"""").
                if run >= 3 {
                    let kept = min(run, 5) - 3
                    text += repeatElement(quote, count: kept)
                    position += kept + 3
                    return String(decoding: text, as: UTF8.self)
                }
                text += repeatElement(quote, count: run)
                position += run
            case TOMLByte.newline, TOMLByte.carriageReturn:
                _ = try skipNewline()
                text.append(TOMLByte.newline)
            case TOMLByte.backslash where basic:
                if try !skipLineEndingBackslash() { try escape(into: &text) }
            default:
                if TOMLByte.isControl(byte) { throw error("a string cannot hold \(found); write it as an escape such as \\t or \\u0001") }
                text.append(byte)
                position += 1
            }
        }
    }

    /// A backslash that ends its line (blanks may follow it) joins the next non-blank text: it,
    /// the line ends and the blanks up to that text are not part of the string.
    private mutating func skipLineEndingBackslash() throws(TOMLError) -> Bool {
        var offset = 1
        while let byte = peek(offset), byte == TOMLByte.space || byte == TOMLByte.tab { offset += 1 }
        let lineEnd = peek(offset) == TOMLByte.newline
            || (peek(offset) == TOMLByte.carriageReturn && peek(offset + 1) == TOMLByte.newline)
        guard lineEnd else { return false }
        position += offset
        while true {
            skipBlanks()
            if try !skipNewline() { return true }
        }
    }

    /// The escape whose backslash is at the cursor, appended to `text` as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws(TOMLError) {
        let site = TOMLSite(line: line, column: column)
        let fail = site.error
        position += 1
        guard let letter = current else { throw fail("a string ends in a lone '\\'") }
        let simple: UInt8? = switch letter {
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "t"): 0x09
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "r"): 0x0D
        case TOMLByte.quote: TOMLByte.quote
        case TOMLByte.backslash: TOMLByte.backslash
        default: nil
        }
        if let simple {
            text.append(simple)
            position += 1
            return
        }
        guard letter == UInt8(ascii: "u") || letter == UInt8(ascii: "U") else {
            throw fail("\\\(found.trimmingQuotes) is not an escape of TOML's (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX); a backslash itself is \\\\")
        }
        let digits = letter == UInt8(ascii: "u") ? 4 : 8
        position += 1
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let byte = current, let digit = Self.hexValue(byte) else {
                throw fail("\\\(Character(Unicode.Scalar(letter))) takes exactly \(digits) hexadecimal digits, found \(found)")
            }
            value = value << 4 | digit
            position += 1
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw fail("\\\(Character(Unicode.Scalar(letter)))\(TOMLByte.hex(value, digits: digits)) is not a Unicode scalar value (a surrogate, or past 10FFFF)")
        }
        UTF8.encode(scalar) { text.append($0) }
    }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

private extension String {
    /// 'x' → x, for a character shown after a backslash.
    var trimmingQuotes: String {
        hasPrefix("'") && hasSuffix("'") && count > 2 ? String(dropFirst().dropLast()) : self
    }
}

/// The values written without quotes: booleans, integers (decimal with `_` between digits, 0x, 0o,
/// 0b), floats (fraction, exponent, inf, nan), and the dates and times a job file refuses.
extension TOMLScanner {
    /// The bare value at the cursor.
    mutating func bareValue() throws(TOMLError) -> TOMLValue {
        if looksLikeDateOrTime {
            throw TOMLError(line: line, column: nil, reason: "dates are not used in a job file", notTOML: false)
        }
        let start = position
        while let byte = current, Self.isBareValueByte(byte) { position += 1 }
        guard position > start else { throw error("expected a value (a string, number, boolean, array or inline table), found \(found)") }
        let word = String(decoding: bytes[start..<position], as: UTF8.self)
        if word == "true" { return .boolean(true) }
        if word == "false" { return .boolean(false) }
        let end = position
        position = start
        let here = TOMLSite(line: line, column: column)
        guard let number = try Self.number(word, at: here) else {
            throw error("`\(word)` is not a value: a string goes in quotes (\"\(word)\"), a number is digits, a boolean true or false")
        }
        position = end
        return number
    }

    /// `1979-05-27...` or `07:32:00`: TOML's dates and times start with four digits and a '-', or
    /// two digits and a ':'.
    private var looksLikeDateOrTime: Bool {
        let digits = (0..<4).prefix { peek($0).map(TOMLByte.isDigit) ?? false }.count
        return (digits == 4 && peek(4) == UInt8(ascii: "-")) || (digits == 2 && peek(2) == UInt8(ascii: ":"))
    }

    private static func isBareValueByte(_ byte: UInt8) -> Bool {
        TOMLByte.isBareKey(byte) || byte == UInt8(ascii: "+") || byte == TOMLByte.dot
    }

    /// `word` as TOML reads a number; nil when it is none (a bare word), and an error at `site`
    /// when it is a number TOML refuses (leading zeros, a misplaced '_', out of range).
    static func number(_ word: String, at site: TOMLSite) throws(TOMLError) -> TOMLValue? {
        var body = Substring(word)
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        switch body {
        case "inf": return .float(sign == "-" ? -.infinity : .infinity)
        case "nan": return .float(.nan)
        default: break
        }
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where body.hasPrefix(prefix) {
            if word.first == "+" || word.first == "-" {
                throw site.error("`\(word)`: a number written with \(prefix) takes no sign")
            }
            let digits = try joinedDigits(body.dropFirst(2), radix: radix, word: word, at: site)
            guard let value = Int(digits, radix: radix) else {
                throw site.error("`\(word)` does not fit a 64-bit integer")
            }
            return .integer(value)
        }
        guard let first = body.first, first.isASCII, first.isNumber else { return nil }
        return try decimal(body, sign: sign, word: word, at: site)
    }

    private static func decimal(_ body: Substring, sign: String, word: String,
                                at site: TOMLSite) throws(TOMLError) -> TOMLValue {
        let exponentStart = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = body[..<(exponentStart ?? body.endIndex)]
        let pointIndex = mantissa.firstIndex(of: ".")
        let integerPart = mantissa[..<(pointIndex ?? mantissa.endIndex)]
        let integerDigits = try joinedDigits(integerPart, radix: 10, word: word, at: site)
        if integerDigits.count > 1, integerDigits.first == "0" {
            throw site.error("`\(word)`: a decimal number has no leading zeros")
        }
        var text = sign + integerDigits
        if let pointIndex {
            text += "." + (try joinedDigits(mantissa[mantissa.index(after: pointIndex)...], radix: 10, word: word, at: site))
        }
        if let exponentStart {
            var exponent = body[body.index(after: exponentStart)...]
            var exponentSign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                exponentSign = String(first)
                exponent = exponent.dropFirst()
            }
            text += "e" + exponentSign + (try joinedDigits(exponent, radix: 10, word: word, at: site))
        }
        if pointIndex == nil && exponentStart == nil {
            guard let value = Int(text) else { throw site.error("`\(word)` does not fit a 64-bit integer") }
            return .integer(value)
        }
        guard let value = Double(text) else { throw site.error("`\(word)` is not a number TOML knows") }
        return .float(value)
    }

    /// `digits` without its underscores, each of which must stand between two digits; at least
    /// one digit, all of `radix`.
    private static func joinedDigits(_ digits: Substring, radix: Int, word: String,
                                     at site: TOMLSite) throws(TOMLError) -> String {
        var joined = ""
        var previousWasDigit = false
        for character in digits {
            if character == "_" {
                guard previousWasDigit else { throw site.error("`\(word)`: an '_' in a number must stand between two digits") }
                previousWasDigit = false
                continue
            }
            guard character.isASCII, let digit = character.hexDigitValue, digit < radix else {
                throw site.error("`\(word)` is not a number TOML knows ('\(character)' is not a digit of base \(radix) here)")
            }
            joined.append(character)
            previousWasDigit = true
        }
        guard previousWasDigit else {
            throw site.error(joined.isEmpty && !digits.contains("_")
                        ? "`\(word)` is not a number TOML knows (digits are missing)"
                        : "`\(word)`: an '_' in a number must stand between two digits")
        }
        return joined
    }
}
