/// One result log's counts for `apns-bulk report`, and what a crash cut off its end.
public struct ResultLogTally: Sendable {
    /// The log's path.
    public let path: String
    /// Rows by outcome.
    public var counts = OutcomeCounts()
    /// What a crash cut off the log's end; nil when it ends cleanly.
    public var cutFrame: CutFrame?
    /// Rows recorded.
    public var rows: Int { counts.total }

    /// Reads the whole log, the complete lines of a cut last frame included, handing every
    /// record to `each` (e.g. a DeadTokenMerge).
    public static func read(path: String, each: (ResultRecord) -> Void = { _ in }) throws(ResultLogError) -> ResultLogTally {
        var tally = ResultLogTally(path: path)
        let reader = try ResultLogReader(path: path, readsCutFrame: true)
        while let record = try reader.next() {
            tally.counts.add(record.outcome)
            each(record)
        }
        tally.cutFrame = reader.cutFrame
        return tally
    }
}

/// The merged cleanup list over several logs (shards): one line per device token, keeping the
/// record with the latest `unregistered_at` (a 410 beats a 400; on a tie the later record wins).
/// Over a broadcast's logs, one line per channel answered ChannelNotRegistered (its latest row).
public final class DeadTokenMerge {
    private var kept = LatestDeadTokens<ResultRecord>()
    /// The kind of the records added (the first one's); nil before any.
    public private(set) var kind: ResultRecord.Kind?
    /// Records of the other kind met after the first: broadcast and device logs do not merge.
    public private(set) var otherKindRecords = 0

    /// An empty list.
    public init() {}

    /// Keeps `record` when it is a dead token newer than the one kept for its token (a broadcast's:
    /// a row answered ChannelNotRegistered).
    public func add(_ record: ResultRecord) {
        if kind == nil { kind = record.kind }
        guard record.kind == kind else {
            otherKindRecords += 1
            return
        }
        if record.kind == .broadcast {
            guard record.outcome == .failed, record.reason == "ChannelNotRegistered" else { return }
            kept.keep(token: record.deviceToken, unregisteredAt: nil, line: record)
            return
        }
        guard record.outcome.isDeadToken else { return }
        kept.keep(token: record.deviceToken, unregisteredAt: record.unregisteredAt, line: record)
    }

    /// Distinct dead tokens kept.
    public var count: Int { kept.count }

    /// The kept records, in order of first appearance.
    public var records: [ResultRecord] { kept.lines }

    /// Writes the merged list as a dead-tokens.csv.
    public func write(to path: String) throws(OutputFileError) {
        let report = try DeadTokenReport(path: path, kind: kind ?? .deviceToken)
        for record in kept.lines { try report.add(record) }
        try report.close()
    }
}
