/// Row numbers seen in more than one place across the logs `report` reads. The logs of one
/// campaign's shards never share a row number, so a repeat means the operator's list is wrong:
/// the same log given twice (a glob and a path), shards of different `--shard N` or of different
/// campaigns. `report` still counts every record, and warns with what this found (docs/report.md, "apns-bulk report").
/// One bit per row number (1.25 MB for 10 million rows); used by one thread.
public final class RowOverlap {
    /// A repeated row: its number, and the log it was met again in.
    public struct Repeat: Sendable, Equatable {
        public let row: Int
        public let path: String
    }

    private var seen = DoneRows()
    /// Row numbers too large for the bit set (no campaign has them; a hand-made log may).
    private var largeRows = Set<Int>()
    /// Records whose row number was met before, over all logs.
    public private(set) var repeatedRows = 0
    /// The first few repeats, for the warning.
    public private(set) var examples: [Repeat] = []

    /// Nothing seen yet.
    public init() {}

    /// Notes `record`'s row, read from the log at `path`.
    public func add(_ record: ResultRecord, path: String) {
        let new = record.row <= 1 << 31 ? seen.insert(record.row) : largeRows.insert(record.row).inserted
        guard !new else { return }
        repeatedRows += 1
        if examples.count < 3 { examples.append(Repeat(row: record.row, path: path)) }
    }

    /// The warning for stderr, or nil when every row number was met once.
    public var warning: String? {
        guard repeatedRows > 0 else { return nil }
        let listed = examples.map { "row \($0.row) again in \($0.path)" }.joined(separator: ", ")
        return "warning: \(repeatedRows) records are for a row number already met in these logs (\(listed)); "
            + "the logs of one campaign's shards never share a row, so a log was given twice, or the logs are of "
            + "different --shard N or of different campaigns: the totals count every record and are over the "
            + "campaign by up to \(repeatedRows). Give each shard's results.jsonl.zst once, all from one campaign."
    }
}
