/// `--payload-template FILE.json`: a JSON payload whose strings hold `{{column}}` placeholders,
/// filled per row from that row's CSV columns (any header column, also one the sender otherwise
/// ignores) and escaped as JSON string text, so a value can hold quotes, backslashes, newlines
/// and any Unicode and the payload stays JSON.
///
/// The template is split once, at load, into literal bytes and placeholders; a row costs one
/// pass that copies the literals and escapes its values. Rules, checked at load (exit 1):
/// a placeholder must sit inside a JSON string (outside one, a value would have to be JSON
/// itself: refused, with its line and column); `{{ name }}` may have spaces; names match header
/// columns as the known columns do (case and surrounding spaces ignored); and with every
/// placeholder empty the template must be a JSON object. A filled payload is then checked like
/// any row's (too large: `PayloadTooLarge`, not JSON: `InvalidPayload`).
public struct PayloadTemplate: Sendable {
    enum Part: Sendable {
        case literal([UInt8])
        /// Index into `columns`.
        case placeholder(Int)
    }

    let parts: [Part]
    /// The placeholders' names (trimmed, lower case), each once, in order of first use.
    public let columns: [String]
    /// The template's file, for messages; nil when it came from elsewhere.
    public var file: String?

    /// What is wrong with a template, for a message that names the file.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case outsideString(name: String, line: Int, column: Int)
        case unclosed(line: Int, column: Int)
        case emptyName(line: Int, column: Int)

        public var description: String {
            switch self {
            case .outsideString(let name, let line, let column):
                "placeholder {{\(name)}} at line \(line), column \(column) is outside a JSON string; "
                    + "put it between quotes (\"{{\(name)}}\"): values are filled in as JSON string text"
            case .unclosed(let line, let column):
                "the {{ at line \(line), column \(column) has no closing }}"
            case .emptyName(let line, let column):
                "the placeholder at line \(line), column \(column) names no column; write {{column_name}}"
            }
        }
    }

    /// Splits `json` into literals and placeholders; throws for a placeholder outside a string,
    /// an unclosed or empty one. (The JSON check is the caller's: `emptyFilled`.) Whitespace after
    /// the object (an editor's final newline) is left out: the payload is the object alone.
    public init(json whole: [UInt8]) throws(Problem) {
        var json = whole
        while let last = json.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { json.removeLast() }
        var parts: [Part] = []
        var columns: [String] = []
        var literal: [UInt8] = []
        var inString = false
        var index = 0
        var line = 1, lineStart = 0
        while index < json.count {
            let byte = json[index]
            if byte == 0x7B, index + 1 < json.count, json[index + 1] == 0x7B {
                let at = (line: line, column: index - lineStart + 1)
                guard let close = Self.closing(json, from: index + 2) else { throw .unclosed(line: at.line, column: at.column) }
                let name = String(decoding: json[(index + 2)..<close], as: UTF8.self).trimmingSpaces
                guard !name.isEmpty else { throw .emptyName(line: at.line, column: at.column) }
                guard inString else { throw .outsideString(name: name, line: at.line, column: at.column) }
                let key = name.lowercased()
                if !columns.contains(key) { columns.append(key) }
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = []
                parts.append(.placeholder(columns.firstIndex(of: key) ?? 0))
                index = close + 2
                continue
            }
            literal.append(byte)
            if inString {
                if byte == 0x5C, index + 1 < json.count {
                    literal.append(json[index + 1])
                    index += 2
                    continue
                }
                if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            }
            if byte == 0x0A {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
        self.columns = columns
    }

    /// The offset of the `}}` that closes a placeholder opened before `start`, on the same line.
    private static func closing(_ json: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < json.count {
            let byte = json[index]
            if byte == 0x7D && json[index + 1] == 0x7D { return index }
            if byte == 0x0A || byte == 0x22 || byte == 0x7B { return nil }
            index += 1
        }
        return nil
    }

    /// The template with every placeholder empty: what the load-time JSON check reads.
    public var emptyFilled: [UInt8] {
        var out: [UInt8] = []
        for case .literal(let bytes) in parts { out.append(contentsOf: bytes) }
        return out
    }

    /// The placeholders' columns that are none of the known ones: the parser keeps them too.
    var extraColumns: [String] { columns.filter { CSVColumn(headerName: $0) == nil } }

    /// The template for `header`'s rows: each placeholder's slot in the batch. Throws the first
    /// column the header lacks.
    func bind(to header: CSVHeader) throws(MissingColumn) -> BoundPayloadTemplate {
        let extras = extraColumns
        let names = Set(header.names.map { $0.trimmingSpaces.lowercased() })
        var slots: [Int] = []
        for column in columns {
            guard names.contains(column) else { throw MissingColumn(column: column, header: header.names) }
            slots.append(CSVColumn(headerName: column)?.rawValue ?? CSVColumn.allCases.count + (extras.firstIndex(of: column) ?? 0))
        }
        return BoundPayloadTemplate(parts: parts, slots: slots)
    }

    /// A placeholder names a column the input's header does not have.
    struct MissingColumn: Error {
        let column: String
        let header: [String]
    }
}

/// A template bound to a header: what the `RowDecoder` fills per row. Immutable.
struct BoundPayloadTemplate: Sendable {
    let parts: [PayloadTemplate.Part]
    /// Per placeholder index: the batch slot of its column.
    let slots: [Int]

    /// The payload of row `index` of `batch`; a field the row lacks fills in empty.
    func fill(_ batch: borrowing CSVBatch, at index: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        for part in parts {
            switch part {
            case .literal(let bytes): out.append(contentsOf: bytes)
            case .placeholder(let column):
                // A quoted JSON string (invalid UTF-8 repaired), less its quotes: the template's own
                // quotes hold it.
                guard let field = batch.field(slot: slots[column], at: index), !field.isEmpty else { continue }
                let start = out.count
                JSONText.appendString(bytes: field, to: &out)
                out.remove(at: start)
                out.removeLast()
            }
        }
        return out
    }
}
