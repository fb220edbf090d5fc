/// A table while its document is read. How a table was made decides what may still be added to
/// it, as TOML 1.0 says: a `[header]` defines a table once; a table that only exists because a
/// header named something inside it (`[a.b]` makes `a`) may get its own header later; dotted keys
/// (`a.b = 1`) make tables that only more dotted keys in the same place extend; an inline table or
/// an array written as a value is complete as written.
final class TOMLTableBuilder {
    enum Origin {
        case implicit, header, dotted, inline
    }

    private enum Slot {
        case value(TOMLValue)
        case table(TOMLTableBuilder)
        /// An array of tables, made and extended by `[[name]]` headers.
        case tables([TOMLTableBuilder])
    }

    private(set) var origin: Origin
    /// Where the table is, from the document's root (from its own start for an inline table's).
    let path: [String]
    /// How many tables and arrays it is nested in, from the document's root.
    let depth: Int
    private var order: [String] = []
    private var slots: [String: (slot: Slot, line: Int)] = [:]

    init(origin: Origin, path: [String] = [], depth: Int = 0) {
        self.origin = origin
        self.path = path
        self.depth = depth
    }

    /// The table a `[path]` header (or `[[path]]` with `appending`) opens, made or extended in this,
    /// the document's root table.
    func openHeader(_ path: [String], appending: Bool, line: Int, column: Int) throws(TOMLError) -> TOMLTableBuilder {
        let fail = { (reason: String) in TOMLError(line: line, column: column, reason: reason, notTOML: true) }
        let header = appending ? "[[\(TOMLKeys.display(path))]]" : "[\(TOMLKeys.display(path))]"
        var table = self
        for (depth, key) in path.enumerated() {
            let shown = TOMLKeys.display(path.prefix(depth + 1))
            let last = depth == path.count - 1
            guard let existing = table.slots[key] else {
                let made = TOMLTableBuilder(origin: last ? .header : .implicit, path: Array(path.prefix(depth + 1)),
                                            depth: table.depth + 1)
                table.insert(key, last && appending ? .tables([made]) : .table(made), line: line)
                table = made
                continue
            }
            switch existing.slot {
            case .value:
                throw fail("`\(shown)` is already a value (line \(existing.line)), so \(header) cannot make it a table")
            case .tables(let items) where !last:
                // `[a.b]` after `[[a]]`: inside the last table `[[a]]` added.
                guard let newest = items.last else { preconditionFailure("an array of tables starts with one") }
                table = newest
            case .tables(let items) where appending:
                let made = TOMLTableBuilder(origin: .header, path: path, depth: table.depth + 1)
                table.slots[key]?.slot = .tables(items + [made])
                table = made
            case .tables:
                throw fail("\(header) defines `\(shown)`, which [[\(shown)]] made an array of tables on line \(existing.line)")
            case .table(let inner) where !last:
                table = inner
            case .table where appending:
                throw fail("\(header) appends to an array of tables, but `\(shown)` is a table (line \(existing.line))")
            case .table(let inner):
                switch inner.origin {
                case .implicit:
                    inner.origin = .header
                    table.slots[key]?.line = line
                    table = inner
                case .dotted:
                    throw fail("table \(header) was already made by dotted keys on line \(existing.line)")
                case .header, .inline:
                    throw fail("table \(header) is defined twice (first on line \(existing.line))")
                }
            }
        }
        return table
    }

    /// Sets `path = value` in this table; a dotted path's tables are made or extended on the way.
    func assign(_ path: [String], _ value: TOMLValue, line: Int, column: Int) throws(TOMLError) {
        let fail = { (reason: String) in TOMLError(line: line, column: column, reason: reason, notTOML: true) }
        let full = self.path + path
        var table = self
        for (depth, key) in path.dropLast().enumerated() {
            let here = Array(full.prefix(self.path.count + depth + 1))
            let shown = TOMLKeys.display(here)
            let rest = TOMLKeys.display(full.dropFirst(here.count))
            guard let existing = table.slots[key] else {
                let made = TOMLTableBuilder(origin: .dotted, path: here, depth: table.depth + 1)
                table.insert(key, .table(made), line: line)
                table = made
                continue
            }
            switch existing.slot {
            case .table(let inner) where inner.origin == .dotted:
                table = inner
            case .table(let inner) where inner.origin == .implicit:
                throw fail("`\(shown)` is a table the header on line \(existing.line) made; set `\(rest)` under a header [\(shown)]")
            case .table:
                throw fail("`\(shown)` has a header of its own ([\(shown)], line \(existing.line)); set `\(rest)` under it")
            case .tables:
                throw fail("`\(shown)` is an array of tables ([[\(shown)]], line \(existing.line)); set `\(rest)` under a [[\(shown)]] header")
            case .value:
                throw fail("`\(shown)` is already a value (line \(existing.line)), so `\(TOMLKeys.display(full))` cannot add a key to it")
            }
        }
        guard let key = path.last else { return }
        if let existing = table.slots[key] {
            throw fail("`\(TOMLKeys.display(full))` is defined twice (first on line \(existing.line))")
        }
        table.insert(key, .value(value), line: line)
    }

    private func insert(_ key: String, _ slot: Slot, line: Int) {
        order.append(key)
        slots[key] = (slot, line)
    }

    /// The finished table, keys in the order they were first set.
    func built() -> TOMLTable {
        var table = TOMLTable()
        for key in order {
            table.lines[key] = slots[key]?.line
            switch slots[key]?.slot {
            case .value(let value): table[key] = value
            case .table(let inner): table[key] = .table(inner.built())
            case .tables(let items): table[key] = .array(items.map { .table($0.built()) })
            case nil: break
            }
        }
        return table
    }
}

/// Keys as a message shows them: bare where TOML allows it, quoted otherwise.
enum TOMLKeys {
    static func display<Keys: Collection<String>>(_ path: Keys) -> String {
        path.map { key in
            !key.isEmpty && key.utf8.allSatisfy(TOMLByte.isBareKey) ? key : "\"" + escaped(key) + "\""
        }.joined(separator: ".")
    }

    private static func escaped(_ key: String) -> String {
        var text = ""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                text += "\\u" + TOMLByte.hex(scalar.value, digits: 4)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }
}
