/// The bytes of a job file under a cursor that knows its line: blanks, comments, line ends, keys,
/// and the errors that point at where the cursor stands. `TOMLReader` builds the document from it;
/// the strings and bare values are in `TOMLScanner+Strings` and `TOMLScanner+BareValues`.
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
