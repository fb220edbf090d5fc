/// How a row ended; every row ends in exactly one (docs/file-formats.md, "Outcomes"). Raw values are the
/// contract of results.jsonl.zst and summary.json.
public enum Outcome: String, CaseIterable, Sendable, Hashable {
    case delivered
    case unregistered
    case badToken = "bad_token"
    case failed
    case rejected
    case gaveUp = "gave_up"
    case aborted

    /// Rows that belong in the dead-token cleanup list.
    public var isDeadToken: Bool { self == .unregistered || self == .badToken }
}

/// One count per outcome.
public struct OutcomeCounts: Sendable, Equatable {
    private var counts = [Int](repeating: 0, count: Outcome.allCases.count)

    /// All zero.
    public init() {}

    /// The count of `outcome`.
    public subscript(outcome: Outcome) -> Int {
        get { counts[Self.index(outcome)] }
        set { counts[Self.index(outcome)] = newValue }
    }

    /// Counts one more row of `outcome`.
    public mutating func add(_ outcome: Outcome) { counts[Self.index(outcome)] += 1 }
    /// Adds `other`'s counts (shards, resumed runs).
    public mutating func add(_ other: OutcomeCounts) { for index in counts.indices { counts[index] += other.counts[index] } }

    /// The sum over all outcomes: equals the row count when the accounting holds.
    public var total: Int { counts.reduce(0, +) }

    /// `rows == delivered + unregistered + bad_token + failed + rejected + gave_up + aborted`.
    public func accountsFor(rows: Int) -> Bool { total == rows }

    static func index(_ outcome: Outcome) -> Int {
        switch outcome {
        case .delivered: 0
        case .unregistered: 1
        case .badToken: 2
        case .failed: 3
        case .rejected: 4
        case .gaveUp: 5
        case .aborted: 6
        }
    }
}
