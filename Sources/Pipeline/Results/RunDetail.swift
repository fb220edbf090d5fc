/// What the HTML report shows beyond summary.json's counts, tallied from the same records as the
/// summary (so a resumed campaign's earlier records count too, the way `ResumedLog` rebuilds the
/// summary): attempts per row, latency per endpoint, dead tokens by reason. Kept apart from the
/// summary's keys: summary.json does not change.
public struct RunDetail: Sendable {
    /// Rows by requests sent: index 0 never sent, 1...5, and the last for 6 or more.
    public var attempts = [Int](repeating: 0, count: RunDetail.attemptBuckets)
    /// The endpoints answered from, in order of their first answer, with their latencies. While a
    /// run has heard from one endpoint only, the summary's own histogram is that endpoint's, so no
    /// row pays a second histogram: `endpointLatency` is filled from the second endpoint's first
    /// answer on (the first endpoint's then starts as the summary's histogram so far).
    public private(set) var endpoints: [String] = []
    public private(set) var endpointLatency: [LatencyHistogram] = []
    private var split = false
    /// Dead tokens (unregistered, bad_token) by reason: what dead-tokens.csv holds, counted.
    public var deadByReason: [String: Int] = [:]
    /// The same by reason and environment, when records name their environment (several
    /// credentials or environments in play): a token dead in sandbox (a TestFlight or debug
    /// build's) is cleaned up apart from one dead in production. Empty otherwise.
    public var deadByEnvironment: [DeadTokenKey: Int] = [:]
    /// The endpoint of the last answer: a run sends to a few, so the search is nearly always one compare.
    private var lastEndpoint = 0

    /// Index 0 through 5, then 6 or more.
    public static let attemptBuckets = 7

    public init() {}

    /// Counts one record; `overall` is the summary's histogram without this record's latency.
    mutating func add(_ record: borrowing RowResult, overall: borrowing LatencyHistogram) {
        attempts[Swift.min(Swift.max(record.attempts, 0), Self.attemptBuckets - 1)] += 1
        if record.outcome.isDeadToken { deadByReason[record.reason ?? "", default: 0] += 1 }
        guard let latency = record.latencyMs, record.status != 0, let endpoint = record.endpoint else { return }
        if !split {
            if endpoints.isEmpty {
                endpoints = [endpoint]
                endpointLatency = [LatencyHistogram()]
                return
            }
            if endpoints[0] == endpoint { return }
            endpointLatency[0] = copy overall
            split = true
        }
        recordLatency(milliseconds: latency, endpoint: endpoint)
    }

    /// Counts a dead token's record (already counted by `add`) under its environment too.
    mutating func addDead(reason: String?, environment: String) {
        deadByEnvironment[DeadTokenKey(reason: reason ?? "", environment: environment), default: 0] += 1
    }

    /// Fills in the one endpoint's histogram from the summary's (`overall`), as a second endpoint would.
    private mutating func materialize(overall: LatencyHistogram) {
        guard !split else { return }
        if !endpoints.isEmpty { endpointLatency[0] = overall }
        split = true
    }

    /// Counts one latency under `endpoint` (and under no other: a caller that uses this keeps
    /// every endpoint's histogram itself).
    public mutating func recordLatency(milliseconds: Double, endpoint: String) {
        split = true
        if lastEndpoint >= endpoints.count || endpoints[lastEndpoint] != endpoint {
            if let index = endpoints.firstIndex(of: endpoint) {
                lastEndpoint = index
            } else {
                endpoints.append(endpoint)
                endpointLatency.append(LatencyHistogram())
                lastEndpoint = endpoints.count - 1
            }
        }
        endpointLatency[lastEndpoint].record(milliseconds: milliseconds)
    }

    /// Adds another tally (another shard's); `own` and `others` are the two summaries' histograms.
    public mutating func add(_ other: RunDetail, own: LatencyHistogram, others: LatencyHistogram) {
        materialize(overall: own)
        var other = other
        other.materialize(overall: others)
        for index in attempts.indices { attempts[index] += other.attempts[index] }
        for (reason, count) in other.deadByReason { deadByReason[reason, default: 0] += count }
        for (key, count) in other.deadByEnvironment { deadByEnvironment[key, default: 0] += count }
        for (endpoint, latency) in zip(other.endpoints, other.endpointLatency) {
            if let index = endpoints.firstIndex(of: endpoint) {
                endpointLatency[index].add(latency)
            } else {
                endpoints.append(endpoint)
                endpointLatency.append(latency)
            }
        }
    }
}

/// A dead-token reason in one environment (`RunDetail.deadByEnvironment`).
public struct DeadTokenKey: Hashable, Sendable {
    public var reason: String
    public var environment: String

    public init(reason: String, environment: String) {
        self.reason = reason
        self.environment = environment
    }
}
