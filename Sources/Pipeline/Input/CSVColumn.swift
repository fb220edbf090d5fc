/// The columns a campaign CSV may have, by header name (docs/file-formats.md, "Input"). Other columns are ignored.
public enum CSVColumn: Int, CaseIterable, Sendable {
    case deviceToken, payload, topic, pushType, priority, expiration, collapseID, apnsID

    /// The column's name in the header row.
    public var headerName: String {
        switch self {
        case .deviceToken: "device_token"
        case .payload: "payload"
        case .topic: "topic"
        case .pushType: "push_type"
        case .priority: "priority"
        case .expiration: "expiration"
        case .collapseID: "collapse_id"
        case .apnsID: "apns_id"
        }
    }

    /// Header names match without regard to case or surrounding spaces.
    init?(headerName: String) {
        let wanted = headerName.lowercased()
        guard let match = Self.allCases.first(where: { $0.headerName == wanted }) else { return nil }
        self = match
    }
}

/// The header row: which known columns exist, and how many fields a row should have.
public struct CSVHeader: Sendable, Equatable {
    /// Every header field as written, unknown columns included.
    public let names: [String]
    /// The known columns present.
    public let columns: Set<CSVColumn>
    /// The fields a row should have.
    public var fieldCount: Int { names.count }
    /// Whether the header names `column`.
    public func has(_ column: CSVColumn) -> Bool { columns.contains(column) }
}

/// What is wrong with one row; the row becomes `rejected` with `reason`, the run goes on.
public enum CSVRowProblem: Sendable, Equatable, CustomStringConvertible {
    /// A field over `CSVSource.maxFieldBytes` (64 KiB); its bytes are not kept.
    case fieldTooLarge(column: CSVColumn, bytes: Int)
    /// The same in a column no one reads (`field` counts from 1, past the header's end too):
    /// DESIGN's limit is on every field of the file, so that what a row is does not depend on which
    /// columns this run happens to use. No header name: a String would make every row's problem,
    /// nil or not, a value to retain and release (measured: about +200 instructions a row).
    case unusedFieldTooLarge(field: Int, bytes: Int)
    /// More or fewer fields than the header: usually an unquoted comma that shifted the columns.
    case fieldCount(found: Int, expected: Int)

    /// A short, stable name for `reason` in the result log.
    public var reason: String {
        switch self {
        case .fieldTooLarge, .unusedFieldTooLarge: LocalReason.fieldTooLarge.rawValue
        case .fieldCount: LocalReason.fieldCountMismatch.rawValue
        }
    }

    /// One line for messages: the problem with its numbers.
    public var description: String {
        switch self {
        case .fieldTooLarge(let column, let bytes):
            "field \(column.headerName) is \(bytes) bytes, over the 65536-byte limit"
        case .unusedFieldTooLarge(let field, let bytes):
            "field \(field) (a column not in use) is \(bytes) bytes, over the 65536-byte limit"
        case .fieldCount(let found, let expected):
            "row has \(found) fields, the header has \(expected) (an unquoted comma?)"
        }
    }
}
