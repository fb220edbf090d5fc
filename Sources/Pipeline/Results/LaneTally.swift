/// The writer's per-row side of `GroupCounts`: a labelled record's outcome counted by its lane,
/// environment code and fallback code in flat arrays, and turned into `by_key`, `by_environment`
/// and `environment_moves` once, when the writer is done. Counting into the String-keyed tables
/// directly hashed two strings a row.
///
/// Writer thread only.
struct LaneTally {
    private static let outcomes = Outcome.allCases.count
    /// Environment codes (`RowResult.environmentCode`): 0 none, 1 production, 2 sandbox.
    private static let codes = 3
    /// By (lane, environment code, outcome); lane 0 is a record without a group (a rejected row
    /// that names only its environment).
    private var counts: [Int]
    /// By (from code, lane, environment code, delivered): rows `--environment-fallback` moved.
    private var moves: [Int]
    private let lanes: Int

    init(lanes: Int) {
        self.lanes = lanes
        counts = [Int](repeating: 0, count: (lanes + 1) * Self.codes * Self.outcomes)
        moves = [Int](repeating: 0, count: Self.codes * (lanes + 1) * Self.codes * 2)
    }

    mutating func add(_ outcome: Outcome, lane: UInt16, environmentCode: UInt8, fallbackFrom: UInt8) {
        let lane = Int(lane) <= lanes ? Int(lane) : 0
        let code = Int(environmentCode) < Self.codes ? Int(environmentCode) : 0
        counts[(lane * Self.codes + code) * Self.outcomes + OutcomeCounts.index(outcome)] += 1
        if fallbackFrom != 0 {
            let from = Int(fallbackFrom) < Self.codes ? Int(fallbackFrom) : 0
            moves[((from * (lanes + 1) + lane) * Self.codes + code) * 2 + (outcome == .delivered ? 1 : 0)] += 1
        }
    }

    /// Adds what was counted to `groups`, as `GroupCounts.add` would have row by row.
    func fold(into groups: inout GroupCounts, labels: RecordLabels) {
        for lane in 0...lanes {
            // A lane's own environment wins over the record's code, as `RecordLabels.fields` says.
            let named = lane > 0 && lane <= labels.lanes.count ? labels.lanes[lane - 1] : nil
            for code in 0..<Self.codes {
                let environment = named?.environment ?? RowResult.environment(code: UInt8(code))
                let base = (lane * Self.codes + code) * Self.outcomes
                for outcome in Outcome.allCases {
                    let count = counts[base + OutcomeCounts.index(outcome)]
                    guard count > 0 else { continue }
                    if let keyID = named?.label { groups.byKey[keyID, default: OutcomeCounts()][outcome] += count }
                    if let environment { groups.byEnvironment[environment.rawValue, default: OutcomeCounts()][outcome] += count }
                }
                for from in 1..<Self.codes {
                    let index = ((from * (lanes + 1) + lane) * Self.codes + code) * 2
                    let moved = moves[index] + moves[index + 1]
                    guard moved > 0, let environment, let source = RowResult.environment(code: UInt8(from)) else { continue }
                    let key = "\(source.rawValue)_to_\(environment.rawValue)"
                    var move = groups.moves[key] ?? (0, 0)
                    move.moved += moved
                    move.delivered += moves[index + 1]
                    groups.moves[key] = move
                }
            }
        }
    }
}
