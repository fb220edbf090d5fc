/// What a cleanup did (or, in a dry run, would do), for the summary line and `--json`.
public struct CleanupCounts: Sendable, Equatable {
    /// Distinct list tokens considered (after the reason filter).
    public var tokens = 0
    /// Table rows a list token matched, whatever their verdict.
    public var matched = 0
    /// Rows deleted or marked, those without an `unregistered_at` to judge by included.
    public var affected = 0
    /// Of `affected`, rows whose list line had no `unregistered_at` (the rule could not judge them).
    public var unjudged = 0
    /// Rows kept because the device registered the token again at or after `unregistered_at`.
    public var keptRegisteredAfter = 0
    /// `--mark`: rows whose mark column was already set, left as they were.
    public var alreadyMarked = 0
    /// Rows kept because their registered-at could not be read as an instant.
    public var unreadableRegisteredAt = 0
    /// Distinct list tokens that matched no row.
    public var notFound = 0
    /// Affected rows by the reason of the list line that matched them.
    public var byReason: [String: Int] = [:]
    /// Batches committed (in a dry run: judged and rolled back).
    public var batches = 0
    public var dryRun = false
    /// Whether `--registered-at-column` let Apple's rule judge the rows.
    public var ruleApplied = false
    /// `delete` or `mark`.
    public var action = "delete"

    public init() {}

    mutating func add(_ rows: [MatchedRow], of entries: [ScratchEntry]) {
        let reasons = Dictionary(entries.map { ($0.token, $0.reason) }, uniquingKeysWith: { first, _ in first })
        var found = Set<String>()
        for row in rows {
            matched += 1
            found.insert(row.listToken)
            switch row.verdict {
            case .affected, .unjudged:
                affected += 1
                if row.verdict == .unjudged { unjudged += 1 }
                byReason[reasons[row.listToken] ?? "", default: 0] += 1
            case .kept: keptRegisteredAfter += 1
            case .alreadyMarked: alreadyMarked += 1
            case .unreadable: unreadableRegisteredAt += 1
            }
        }
        tokens += entries.count
        notFound += entries.filter { !found.contains($0.token) }.count
    }
}

/// A row the cleanup deleted or marked (or would have), for `--audit-out`.
public struct AuditedRow: Sendable, Equatable {
    /// The row's key columns (`CleanupPlan.keyColumns`), as the database renders them.
    public let keys: [String?]
    /// The token as the table spells it.
    public let tableToken: String
    public let reason: String
    public let unregisteredAt: Int64?
    /// `delete` or `mark`; `would-delete` or `would-mark` in a dry run.
    public let action: String

    public init(keys: [String?], tableToken: String, reason: String, unregisteredAt: Int64?, action: String) {
        self.keys = keys
        self.tableToken = tableToken
        self.reason = reason
        self.unregisteredAt = unregisteredAt
        self.action = action
    }
}
