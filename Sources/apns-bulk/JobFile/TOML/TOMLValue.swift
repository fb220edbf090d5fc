/// A value of a job file, as `TOMLReader` reads it: TOML 1.0 without its dates and times, which
/// no flag of `send` takes. Arrays hold any values, mixed as TOML 1.0 allows; an array of tables
/// (`[[keys]]`) is an array whose items are tables.
enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([TOMLValue])
    case table(TOMLTable)

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var integer: Int? { if case .integer(let value) = self { value } else { nil } }
    var float: Double? { if case .float(let value) = self { value } else { nil } }
    var boolean: Bool? { if case .boolean(let value) = self { value } else { nil } }
    var array: [TOMLValue]? { if case .array(let value) = self { value } else { nil } }
    var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }
}

/// A table's keys in the order the file gives them, so a job file expands into flags in the
/// order it was written (repeated flags such as `endpoint` keep theirs).
struct TOMLTable: Equatable, Sendable {
    struct Entry: Equatable, Sendable {
        var key: String
        var value: TOMLValue
    }

    private(set) var entries: [Entry] = []
    private var positions: [String: Int] = [:]
    /// The line each key was set on, for messages (`TOMLReader` fills it; not part of equality).
    var lines: [String: Int] = [:]

    init() {}

    /// `pairs` in order; a later duplicate key replaces the earlier value (the reader never makes one).
    init(_ pairs: KeyValuePairs<String, TOMLValue>) {
        for (key, value) in pairs { self[key] = value }
    }

    var keys: [String] { entries.map(\.key) }
    var isEmpty: Bool { entries.isEmpty }

    subscript(key: String) -> TOMLValue? {
        get { positions[key].map { entries[$0].value } }
        set {
            if let position = positions[key] {
                if let newValue { entries[position].value = newValue } else { remove(at: position) }
            } else if let newValue {
                positions[key] = entries.count
                entries.append(Entry(key: key, value: newValue))
            }
        }
    }

    private mutating func remove(at position: Int) {
        positions[entries[position].key] = nil
        entries.remove(at: position)
        for index in position..<entries.count { positions[entries[index].key] = index }
    }

    static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool { lhs.entries == rhs.entries }
}

/// Why a job file could not be read, where: the 1-based line, and the column (counted in
/// characters) where pointing at one helps.
struct TOMLError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int?
    /// What was wrong, for a person: "expected '=' after the key `topic`, found ':'".
    var reason: String
    /// Whether the text breaks TOML's grammar or rules (duplicates included), rather than using a
    /// part of TOML that a job file has no use for (dates).
    var notTOML: Bool

    var description: String {
        "line \(line): " + (notTOML ? "not TOML: " : "") + reason + (column.map { " (column \($0))" } ?? "")
    }
}
