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

/// The names a campaign's header gives its columns: a device campaign's (`device_token`, ...), or a
/// Live Activity broadcast's (`apns-bulk broadcast`), whose `channel_id` fills the token's place and
/// `apns_request_id` the apns-id's, so that the engine reads both kinds of row alike. A broadcast
/// knows no topic, push type or collapse id: such columns are ignored, as unknown ones are.
public enum CSVColumnNames: Sendable {
    case deviceCampaign, broadcast

    /// The column a header field names, matched without regard to case or surrounding spaces.
    func column(named name: String) -> CSVColumn? {
        switch self {
        case .deviceCampaign: return CSVColumn(headerName: name)
        case .broadcast:
            switch name.lowercased() {
            case "channel_id": return .deviceToken
            case "payload": return .payload
            case "priority": return .priority
            case "expiration": return .expiration
            case "apns_request_id": return .apnsID
            default: return nil
            }
        }
    }

    /// The header name of `column` under these names.
    public func headerName(_ column: CSVColumn) -> String {
        switch (self, column) {
        case (.broadcast, .deviceToken): "channel_id"
        case (.broadcast, .apnsID): "apns_request_id"
        default: column.headerName
        }
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
