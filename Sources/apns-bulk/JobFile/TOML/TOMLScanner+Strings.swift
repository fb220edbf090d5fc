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
