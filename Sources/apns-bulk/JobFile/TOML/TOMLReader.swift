/// Reads a job file: the TOML 1.0 a job file needs (comments; bare, quoted and dotted keys; all
/// four kinds of string; integers, floats and booleans; arrays, inline tables, `[tables]` and
/// `[[arrays of tables]]`), all of it but dates and times, which are refused by name. Pure Swift,
/// so that no input can stop the process: every mistake is a `TOMLError` with its line and, where
/// it helps, its column.
enum TOMLReader {
    /// How deep tables and arrays may nest: deep enough for any job file, shallow enough that no
    /// input runs the reader, or the values it returns (which recurse per level), out of stack.
    static let maximumNesting = 64

    static func read(_ text: String) throws(TOMLError) -> TOMLTable {
        var document = Document(scanner: TOMLScanner(text))
        try document.read()
        return document.root.built()
    }

    private struct Document {
        var scanner: TOMLScanner
        let root = TOMLTableBuilder(origin: .header)

        mutating func read() throws(TOMLError) {
            var current = root
            while true {
                scanner.skipBlanks()
                try scanner.skipComment()
                guard let byte = scanner.current else { return }
                if try scanner.skipNewline() { continue }
                if byte == TOMLByte.openBracket {
                    current = try header()
                } else {
                    let key = try keyValue(into: current)
                    try scanner.expectEndOfLine(after: "the value of `\(TOMLKeys.display(key))`")
                }
            }
        }

        /// `[a.b]` or `[[a.b]]`, the cursor on its first bracket; returns the table it opens.
        private mutating func header() throws(TOMLError) -> TOMLTableBuilder {
            let line = scanner.line
            let column = scanner.column
            scanner.position += 1
            let appending = scanner.current == TOMLByte.openBracket
            if appending { scanner.position += 1 }
            scanner.skipBlanks()
            guard scanner.atKey else {
                throw scanner.error("a table header must start with a key ([name] or [\"quoted name\"]), found \(scanner.found)")
            }
            let path = try scanner.key()
            try checkNesting(path.count)
            scanner.skipBlanks()
            let shown = TOMLKeys.display(path)
            if appending {
                guard scanner.current == TOMLByte.closeBracket, scanner.peek(1) == TOMLByte.closeBracket else {
                    throw scanner.error("expected ']]' to close the header [[\(shown)]], found \(scanner.found)")
                }
                scanner.position += 2
            } else {
                try scanner.expect(TOMLByte.closeBracket, "']' to close the header [\(shown)]")
            }
            let table = try root.openHeader(path, appending: appending, line: line, column: column)
            try scanner.expectEndOfLine(after: appending ? "the header [[\(shown)]]" : "the header [\(shown)]")
            return table
        }

        /// `key = value` into `table`, the cursor on the key; returns the key.
        private mutating func keyValue(into table: TOMLTableBuilder) throws(TOMLError) -> [String] {
            let line = scanner.line
            let column = scanner.column
            guard scanner.atKey else {
                throw scanner.error("expected a key (a name, a \"quoted name\" or a dotted.name) or a [table] header, found \(scanner.found)")
            }
            let key = try scanner.key()
            let depth = table.depth + key.count
            try checkNesting(depth)
            scanner.skipBlanks()
            let shown = TOMLKeys.display(key)
            try scanner.expect(TOMLByte.equals, "'=' after the key `\(shown)`")
            scanner.skipBlanks()
            if scanner.current == nil || scanner.current == TOMLByte.newline || scanner.current == TOMLByte.carriageReturn
                || scanner.current == TOMLByte.hash {
                throw scanner.error("`\(shown)` has no value after its '='")
            }
            try table.assign(key, try value(depth: depth), line: line, column: column)
            return key
        }

        private mutating func value(depth: Int) throws(TOMLError) -> TOMLValue {
            switch scanner.current {
            case TOMLByte.quote, TOMLByte.apostrophe: .string(try scanner.string())
            case TOMLByte.openBracket: try array(depth: depth)
            case TOMLByte.openBrace: try inlineTable(depth: depth)
            default: try scanner.bareValue()
            }
        }

        /// `[1, "two", [3]]`: over several lines if need be, comments between items, a comma after
        /// the last item or not.
        private mutating func array(depth: Int) throws(TOMLError) -> TOMLValue {
            try checkNesting(depth)
            let opened = (line: scanner.line, column: scanner.column)
            scanner.position += 1
            var items: [TOMLValue] = []
            while true {
                try scanner.skipSpaceCommentsAndNewlines()
                switch scanner.current {
                case nil:
                    throw TOMLError(line: opened.line, column: opened.column,
                                    reason: "the array opened here has no closing ']'", notTOML: true)
                case TOMLByte.closeBracket:
                    scanner.position += 1
                    return .array(items)
                case TOMLByte.comma, TOMLByte.closeBrace, TOMLByte.equals:
                    throw scanner.error("an array holds values separated by commas, found \(scanner.found)")
                default:
                    items.append(try value(depth: depth + 1))
                }
                try scanner.skipSpaceCommentsAndNewlines()
                if scanner.current == TOMLByte.comma {
                    scanner.position += 1
                } else if scanner.current != TOMLByte.closeBracket {
                    throw scanner.error("expected ',' or ']' after an item of the array, found \(scanner.found)")
                }
            }
        }

        /// `{ name = "x", a.b = 1 }`: on one line, no comma after the last pair.
        private mutating func inlineTable(depth: Int) throws(TOMLError) -> TOMLValue {
            try checkNesting(depth)
            scanner.position += 1
            let table = TOMLTableBuilder(origin: .inline, depth: depth)
            scanner.skipBlanks()
            if scanner.current == TOMLByte.closeBrace {
                scanner.position += 1
                return .table(table.built())
            }
            while true {
                scanner.skipBlanks()
                if scanner.current == TOMLByte.closeBrace {
                    throw scanner.error("an inline table has no ',' after its last pair")
                }
                guard scanner.atKey else { throw scanner.error("expected a key in the inline table, found \(scanner.found)") }
                _ = try keyValue(into: table)
                scanner.skipBlanks()
                if scanner.current == TOMLByte.comma {
                    scanner.position += 1
                } else if scanner.current == TOMLByte.closeBrace {
                    scanner.position += 1
                    return .table(table.built())
                } else {
                    throw scanner.error("expected ',' or '}' after a pair of the inline table (which is written on one line), found \(scanner.found)")
                }
            }
        }

        private func checkNesting(_ depth: Int) throws(TOMLError) {
            if depth > TOMLReader.maximumNesting {
                throw scanner.error("tables and arrays nest more than \(TOMLReader.maximumNesting) deep")
            }
        }
    }
}
