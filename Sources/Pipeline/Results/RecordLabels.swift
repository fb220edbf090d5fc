import APNs

/// The text behind a record's `lane`, `environmentCode` and `fallbackFrom`: the `environment`,
/// `key_id` and `environment_fallback_from` fields of a result line, written only in a run where
/// more than one credential or environment is in play (left out otherwise, as
/// `retried_after_connection_loss` is). The per-row path carries three small integers; the
/// strings are the writer's, added to the line it already made. A class: the writer lends it per
/// record, one retain rather than one per array.
final class RecordLabels: Sendable {
    /// By lane - 1: the group's environment and credential label.
    let lanes: [(environment: APNsEnvironment, label: String)]

    /// By lane - 1: what the lane adds to a line, `,"environment":"…","key_id":"…"`, made once.
    private let fragments: [[UInt8]]
    /// The fragments end to end, and where each lies: a line written in place borrows its
    /// fragment from one flat buffer (no array of arrays to retain per row).
    private let fragmentBytes: [UInt8]
    private let fragmentRanges: [Range<Int>]

    convenience init(groups: [CredentialGroup]) {
        self.init(lanes: groups.map { ($0.environment, $0.label ?? "") })
    }

    /// The same lanes, before any group is made (a dry run makes none).
    convenience init(configuration: CampaignConfiguration) {
        self.init(lanes: CredentialGroup.layout(of: configuration).map { ($0.environment, configuration.credentials[$0.credential].label) })
    }

    init(lanes: [(environment: APNsEnvironment, label: String)]) {
        self.lanes = lanes
        fragments = lanes.map { lane in
            var line: [UInt8] = Array("{}\n".utf8)
            Self.amend(&line, environment: lane.environment.rawValue, keyID: lane.label, fallbackFrom: nil)
            return Array(line.dropFirst().dropLast(2))
        }
        var bytes: [UInt8] = []
        fragmentRanges = fragments.map { fragment in
            defer { bytes.append(contentsOf: fragment) }
            return bytes.count..<bytes.count + fragment.count
        }
        fragmentBytes = bytes
    }

    /// Runs `body` with the fields `record`'s lane adds to its line, when that is all its labels
    /// are (no `environment_fallback_from`); nil otherwise, without running it.
    /// The record goes to `body` as an argument: a closure that captured it would copy it (a
    /// retain and release of each of its references).
    func withFragment<Result>(of record: borrowing RowResult,
                              _ body: (borrowing RowResult, UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        let lane = Int(record.lane)
        guard lane > 0 && lane <= fragmentRanges.count && record.fallbackFrom == 0 else { return nil }
        let range = fragmentRanges[lane - 1]
        return fragmentBytes.withUnsafeBufferPointer { body(record, UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// `amend` with `record`'s fields: a labelled record of a group pays one append of its lane's
    /// fragment (the writer's per-row path in a several-key run).
    func amend(_ line: inout [UInt8], for record: borrowing RowResult) {
        let lane = Int(record.lane)
        guard lane > 0 && lane <= fragments.count else {
            let fields = fields(of: record)
            Self.amend(&line, environment: fields.environment, keyID: fields.keyID, fallbackFrom: fields.fallbackFrom)
            return
        }
        guard line.count >= 2, line[line.count - 2] == UInt8(ascii: "}") else { return }
        line.removeLast(2)
        line.append(contentsOf: fragments[lane - 1])
        if let fallbackFrom = RowResult.environment(code: record.fallbackFrom) {
            Self.append("environment_fallback_from", fallbackFrom.rawValue, to: &line)
        }
        JSONText.appendLiteral("}\n", to: &line)
    }

    /// What `record` adds to the line, as strings (all nil for a record without labels).
    func fields(of record: borrowing RowResult) -> (environment: String?, keyID: String?, fallbackFrom: String?) {
        let lane = Int(record.lane)
        let environment = lane > 0 && lane <= lanes.count ? lanes[lane - 1].environment
            : RowResult.environment(code: record.environmentCode)
        return (environment?.rawValue, lane > 0 && lane <= lanes.count ? lanes[lane - 1].label : nil,
                RowResult.environment(code: record.fallbackFrom)?.rawValue)
    }

    /// Adds the fields to `line`, the record's complete line ("...}\n"); nothing when all are nil.
    static func amend(_ line: inout [UInt8], environment: String?, keyID: String?, fallbackFrom: String?) {
        guard environment != nil || keyID != nil || fallbackFrom != nil,
              line.count >= 2, line[line.count - 2] == UInt8(ascii: "}") else { return }
        line.removeLast(2)
        // Unrolled: an array of (key, value) pairs here was an allocation per labelled record.
        if let environment { append("environment", environment, to: &line) }
        if let keyID { append("key_id", keyID, to: &line) }
        if let fallbackFrom { append("environment_fallback_from", fallbackFrom, to: &line) }
        JSONText.appendLiteral("}\n", to: &line)
    }

    private static func append(_ key: StaticString, _ value: String, to line: inout [UInt8]) {
        JSONText.appendLiteral(",\"", to: &line)
        JSONText.appendLiteral(key, to: &line)
        JSONText.appendLiteral("\":", to: &line)
        JSONText.appendString(value, to: &line)
    }
}
