import Foundation
/// summary.json's view of a campaign with several credentials or environments: `by_key` and
/// `by_environment` (rows by outcome of each credential label and environment), `environment_moves`
/// (rows `--environment-fallback` moved, by direction, and how many of them were delivered) and
/// `no_credentials` (the topics and environments no credential serves, with their rows). Present
/// only in such a campaign; a one-credential run's summary has none of these keys.
public struct GroupCounts: Sendable, Equatable {
    public var byKey: [String: OutcomeCounts] = [:]
    public var byEnvironment: [String: OutcomeCounts] = [:]
    /// "production_to_sandbox" / "sandbox_to_production" → (moved, delivered).
    public var moves: [String: (moved: Int, delivered: Int)] = [:]
    /// (topic, environment) → rows rejected NoCredentialsForTopic, this run's.
    public var noCredentials: [(topic: String, environment: String, rows: Int)] = []

    public init() {}

    mutating func add(_ outcome: Outcome, environment: String?, keyID: String?, fallbackFrom: String?) {
        if let keyID { byKey[keyID, default: OutcomeCounts()].add(outcome) }
        if let environment { byEnvironment[environment, default: OutcomeCounts()].add(outcome) }
        if let fallbackFrom, let environment {
            let key = "\(fallbackFrom)_to_\(environment)"
            var move = moves[key] ?? (0, 0)
            move.moved += 1
            if outcome == .delivered { move.delivered += 1 }
            moves[key] = move
        }
    }

    public static func == (lhs: GroupCounts, rhs: GroupCounts) -> Bool {
        lhs.byKey == rhs.byKey && lhs.byEnvironment == rhs.byEnvironment
            && lhs.moves.mapValues { [$0.moved, $0.delivered] } == rhs.moves.mapValues { [$0.moved, $0.delivered] }
            && lhs.noCredentials.map { "\($0.topic) \($0.environment) \($0.rows)" }
                == rhs.noCredentials.map { "\($0.topic) \($0.environment) \($0.rows)" }
    }

    /// For `send`'s summary on stdout: rows by key (the first ten) and the fallback's moves.
    var humanLines: [String] {
        func counts(_ counts: OutcomeCounts) -> String {
            Outcome.allCases.filter { counts[$0] > 0 }.map { "\($0.rawValue) \(counts[$0])" }.joined(separator: ", ")
        }
        var lines = byKey.sorted { $0.key < $1.key }.prefix(10).map { "key \($0.key): \(counts($0.value))" }
        if byKey.count > 10 { lines.append("(\(byKey.count - 10) more keys in summary.json's by_key)") }
        for (direction, move) in moves.sorted(by: { $0.key < $1.key }) {
            lines.append("--environment-fallback \(direction.replacingOccurrences(of: "_to_", with: " to ")): "
                         + "\(move.moved) rows tried, \(move.delivered) delivered")
        }
        return lines
    }

    func appendJSON(to out: inout [UInt8]) {
        func appendCounts(_ key: String, _ table: [String: OutcomeCounts]) {
            out.append(contentsOf: ",\n  \"\(key)\": {".utf8)
            for (index, (name, counts)) in table.sorted(by: { $0.key < $1.key }).enumerated() {
                out.append(contentsOf: (index == 0 ? "" : ", ").utf8)
                JSONText.appendString(name, to: &out)
                out.append(contentsOf: ": {\"rows\": ".utf8)
                JSONText.appendInteger(Int64(counts.total), to: &out)
                for outcome in Outcome.allCases where counts[outcome] > 0 {
                    out.append(contentsOf: ", \"\(outcome.rawValue)\": ".utf8)
                    JSONText.appendInteger(Int64(counts[outcome]), to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "}"))
        }
        appendCounts("by_key", byKey)
        appendCounts("by_environment", byEnvironment)
        out.append(contentsOf: ",\n  \"environment_moves\": {".utf8)
        for (index, (direction, move)) in moves.sorted(by: { $0.key < $1.key }).enumerated() {
            out.append(contentsOf: "\(index == 0 ? "" : ", ")\"\(direction)\": {\"rows\": \(move.moved), \"delivered\": \(move.delivered)}".utf8)
        }
        out.append(contentsOf: "},\n  \"no_credentials\": [".utf8)
        for (index, entry) in noCredentials.enumerated() {
            out.append(contentsOf: (index == 0 ? "{\"topic\": " : ", {\"topic\": ").utf8)
            JSONText.appendString(entry.topic, to: &out)
            out.append(contentsOf: ", \"environment\": \"\(entry.environment)\", \"rows\": \(entry.rows)}".utf8)
        }
        out.append(UInt8(ascii: "]"))
    }
}

/// How the writer counts `GroupCounts`, row by row: a labelled record's outcome counted by its
/// lane (its credential group), environment code and fallback code in flat arrays, and turned into
/// `by_key`, `by_environment` and `environment_moves` once, when the writer is done. Counting into
/// the String-keyed tables directly hashed two strings a row.
///
/// Writer thread only.
struct GroupCountsTally {
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
