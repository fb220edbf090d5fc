import Synchronization

/// Run-wide values (`--topic`, `--push-type`, ...; `RowHeaders.Columns` bits) APNs refused for
/// good: the rows that use one are not sent; each ends `aborted` with the reason. A one-credential
/// run has one set, the run's. With several credentials each group has its own: whether APNs
/// accepts a run-wide value can depend on the key (a topic-specific key refused TopicDisallowed for
/// `--topic` says nothing about the other keys), so a refusal stops only that group's rows.
///
/// Sendable: an atomic the workers read once per fill, and a Mutex for the reasons.
final class RunWideRefusals: Sendable {
    /// The refused columns' bits.
    let refused = Atomic<UInt8>(0)
    private let reasons = Mutex<[(column: RowHeaders.Columns, reason: String)]>([])
    /// Whose rows stop, for the warning: nil for the run's; "key LABEL in ENVIRONMENT" for a group's.
    let owner: String?

    init(owner: String? = nil) {
        self.owner = owner
    }

    /// APNs refused the value of `column` with `reason` `--abort-after` times in a row: from now
    /// on the rows that use it end `aborted`; the first refusal of a column warns.
    func refuse(_ column: RowHeaders.Columns, reason: String, warn: (String) -> Void) {
        let first = reasons.withLock { list -> Bool in
            guard !list.contains(where: { $0.column == column }) else { return false }
            list.append((column, reason))
            return true
        }
        guard first else { return }
        refused.bitwiseOr(column.rawValue, ordering: .releasing)
        if let owner {
            warn("warning: stopped sending the rows of \(owner) that use the run's \(column.flag): APNs answered \(reason); "
                 + "they are recorded aborted, its rows with a \(column.csvColumn) column of their own and the other keys' "
                 + "rows go on. Fix \(column.flag) (or that key's topics) and run the same command with --resume to send them.")
        } else {
            warn("warning: stopped sending the rows that use the run's \(column.flag): APNs answered \(reason); they are "
                 + "recorded aborted, rows with a \(column.csvColumn) column of their own go on. Fix \(column.flag) "
                 + "and run the same command with --resume to send them.")
        }
    }

    /// The reason a job is not to be sent, when it uses a value in `refused` (this set's, loaded).
    func refusal(of job: Job, refused: UInt8) -> String? {
        let own = job.headers?.own.rawValue ?? 0
        guard refused & ~own != 0 else { return nil }
        return reasons.withLock { list in list.first { $0.column.rawValue & refused & ~own != 0 }?.reason }
    }
}
