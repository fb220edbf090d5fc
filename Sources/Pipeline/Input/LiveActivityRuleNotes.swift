import APNs

/// The rows rejected for an ActivityKit rule (`RowDecoder.Decoded.breaksLiveActivityRule`): each is
/// recorded `rejected` `InvalidPayload`, as a payload that is not JSON is, and the first row that
/// breaks each rule is named on stderr with the rule, since the record has no room for it.
/// One reading thread's (the reader's, or a dry run's).
struct LiveActivityRuleNotes {
    /// The rules named already, a bit each (`Rule.rawValue`).
    private var named: UInt32 = 0

    /// Row `row`'s record; the first row of its rule is named through `warn`.
    mutating func record(row: Int, deviceToken: ArraySlice<UInt8>, breaking rule: LiveActivityPayload.Rule,
                         warn: (String) -> Void) -> RowResult {
        let bit: UInt32 = 1 << UInt32(rule.rawValue)
        if named & bit == 0 {
            named |= bit
            warn("warning: row \(row) is rejected \(Self.reason): \(rule.detail); every row that breaks this "
                 + "rule is rejected alike (results.jsonl.zst)")
        }
        return RowResult(row: row, deviceToken: deviceToken, outcome: .rejected, reason: Self.reason)
    }

    static let reason = Reason.invalidPayload.name
}
