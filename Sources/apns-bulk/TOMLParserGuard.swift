/// Finds what would crash the TOML parser. toml++ as TOMLKit 0.6 bundles it aborts the process
/// (an assertion, in release builds too) on a table header whose key starts with neither a
/// bare-key character nor a quote, such as `[:x]`, `[[[a]]]` or a `[` ending its line (fixed
/// upstream in toml++ pull request 301), and on a `}` where an array expects a value (`[ }`,
/// `[1, }`). Both found by fuzzing the job-file reader.
///
/// A small lexer over the bytes: strings (all four kinds), comments and the brackets of values are
/// skipped, so only a `[` that begins a line outside any value is taken for a header, as toml++ does.
enum TOMLParserGuard {
    /// The 1-based line of the first header toml++ cannot start reading, or of a `}` inside an
    /// array; nil when there is neither.
    static func firstLineThatCrashesTheParser(in text: [UInt8]) -> Int? {
        var lexer = Lexer(text: text)
        return lexer.run()
    }

    private struct Lexer {
        let text: [UInt8]
        var index = 0
        var line = 1

        init(text: [UInt8]) { self.text = text }

        mutating func run() -> Int? {
            var open: [UInt8] = []  // the brackets and braces of values, innermost last
            var lineStart = true
            var inHeader = false
            while index < text.count {
                let byte = text[index]
                switch byte {
                case newline:
                    line += 1
                    lineStart = true
                    inHeader = false
                    index += 1
                    continue
                case space, tab, carriageReturn:
                    index += 1
                    continue
                case hash:
                    while index < text.count, text[index] != newline { index += 1 }
                    continue
                case doubleQuote, singleQuote:
                    skipString(byte)
                case openBracket where lineStart && open.isEmpty:
                    if !headerKeyStartsWell(after: index) { return line }
                    inHeader = true
                    index += 1
                case openBracket, openBrace:
                    if !inHeader { open.append(byte) }
                    index += 1
                case closeBrace where open.last == openBracket:
                    return line
                case closeBracket, closeBrace:
                    if !inHeader, !open.isEmpty { open.removeLast() }
                    index += 1
                default:
                    index += 1
                }
                lineStart = false
            }
            return nil
        }

        /// After the `[` at `start`: the second `[` of an array-of-tables header if it follows at
        /// once, spaces and tabs, then what toml++ reads the key from.
        func headerKeyStartsWell(after start: Int) -> Bool {
            var k = start + 1
            let skippedBlank = skipBlanks(&k)
            if k < text.count, text[k] == openBracket {
                if skippedBlank { return true }  // toml++ refuses `[ [` itself
                k += 1
                _ = skipBlanks(&k)
            }
            guard k < text.count else { return true }  // toml++ reports the end of the file itself
            let c = text[k]
            return isBareKeyByte(c) || c == doubleQuote || c == singleQuote || c == closeBracket
        }

        func skipBlanks(_ k: inout Int) -> Bool {
            let start = k
            while k < text.count, text[k] == space || text[k] == tab { k += 1 }
            return k > start
        }

        func isBareKeyByte(_ c: UInt8) -> Bool {
            (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
        }

        /// Moves past the string starting at `index` (basic strings take backslash escapes; a
        /// one-line string also ends at the end of its line, where toml++ reports it).
        mutating func skipString(_ quote: UInt8) {
            let triple = index + 2 < text.count && text[index + 1] == quote && text[index + 2] == quote
            index += triple ? 3 : 1
            while index < text.count {
                let c = text[index]
                if c == quote && (!triple || (index + 2 < text.count && text[index + 1] == quote && text[index + 2] == quote)) {
                    index += triple ? 3 : 1
                    return
                }
                if c == newline {
                    if !triple { return }
                    line += 1
                }
                index += (c == backslash && quote == doubleQuote) ? 2 : 1
            }
        }
    }
}

private let newline = UInt8(ascii: "\n")
private let carriageReturn = UInt8(ascii: "\r")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let hash = UInt8(ascii: "#")
private let doubleQuote = UInt8(ascii: "\"")
private let singleQuote = UInt8(ascii: "'")
private let backslash = UInt8(ascii: "\\")
private let openBracket = UInt8(ascii: "[")
private let closeBracket = UInt8(ascii: "]")
private let openBrace = UInt8(ascii: "{")
private let closeBrace = UInt8(ascii: "}")
