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
