import APNs

/// The text behind a record's `lane`, `environmentCode` and `fallbackFrom`: the `environment`,
/// `key_id` and `environment_fallback_from` fields of a result line, written only in a run where
/// more than one credential or environment is in play (left out otherwise, as
/// `retried_after_connection_loss` is). The per-row path carries three small integers; the
/// fields they stand for are encoded here once and copied into each line as they are. A class:
/// the writer lends it per record, one retain rather than one per array.
final class RecordLabels: Sendable {
    /// By lane - 1: the group's environment and credential label.
    let lanes: [(environment: APNsEnvironment, label: String)]

    /// What a record adds to its line (`ResultLineEncoder.labelFields`), made once for each
    /// combination a record can name, end to end in one flat buffer: a line written in place
    /// borrows its fields from it (no array of arrays to retain per row). By `slot * 3 + fallback
    /// code`, where a slot is an environment code (0...2, a row no group took) or 2 + a lane.
    private let fieldBytes: [UInt8]
    private let fieldRanges: [Range<Int>]

    convenience init(groups: [CredentialGroup]) {
        self.init(lanes: groups.map { ($0.environment, $0.label ?? "") })
    }

    /// The same lanes, before any group is made (a dry run makes none).
    convenience init(configuration: CampaignConfiguration) {
        self.init(lanes: CredentialGroup.layout(of: configuration).map { ($0.environment, configuration.credentials[$0.credential].label) })
    }

    init(lanes: [(environment: APNsEnvironment, label: String)]) {
        self.lanes = lanes
        let environments: [APNsEnvironment?] = [nil, .production, .sandbox]
        let slots = environments.map { (environment: $0?.rawValue, keyID: nil as String?) }
            + lanes.map { (environment: $0.environment.rawValue, keyID: $0.label) }
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for slot in slots {
            for fallbackFrom in environments {
                let start = bytes.count
                bytes += ResultLineEncoder.labelFields(environment: slot.environment, keyID: slot.keyID,
                                                       fallbackFrom: fallbackFrom?.rawValue) ?? []
                ranges.append(start..<bytes.count)
            }
        }
        fieldBytes = bytes
        fieldRanges = ranges
    }

    /// Runs `body` with the fields a record of these codes adds to its line (as `fields(of:)`
    /// names them), or nil when it adds none or there are no `labels`.
    static func withFields<Result>(of labels: RecordLabels?, lane: UInt16, environmentCode: UInt8, fallbackFrom: UInt8,
                                   _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard let labels else { return body(nil) }
        let lane = Int(lane)
        let slot = lane > 0 && lane <= labels.lanes.count ? 2 + lane : code(environmentCode)
        let range = labels.fieldRanges[slot * 3 + code(fallbackFrom)]
        guard !range.isEmpty else { return body(nil) }
        return labels.fieldBytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// An environment code as a slot counts it (`RowResult.environment(code:)`: none past 2).
    private static func code(_ code: UInt8) -> Int { code <= 2 ? Int(code) : 0 }

    /// What `record` adds to the line, as strings (all nil for a record without labels).
    func fields(of record: borrowing RowResult) -> (environment: String?, keyID: String?, fallbackFrom: String?) {
        let lane = Int(record.lane)
        let environment = lane > 0 && lane <= lanes.count ? lanes[lane - 1].environment
            : RowResult.environment(code: record.environmentCode)
        return (environment?.rawValue, lane > 0 && lane <= lanes.count ? lanes[lane - 1].label : nil,
                RowResult.environment(code: record.fallbackFrom)?.rawValue)
    }
}
