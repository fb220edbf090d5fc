/// What the HTML report shows beyond summary.json's counts, tallied from the same records as the
/// summary (so a resumed campaign's earlier records count too, the way `ResumedLog` rebuilds the
/// summary): attempts per row, latency per endpoint, dead tokens by reason. Kept apart from the
/// summary's keys: summary.json does not change.
public struct RunDetail: Sendable {
    /// Rows by requests sent: index 0 never sent, 1...5, and the last for 6 or more.
    public var attempts = [Int](repeating: 0, count: RunDetail.attemptBuckets)
    /// The endpoints answered from, in order of their first answer, with their latencies.
    public private(set) var endpoints: [String] = []
    public private(set) var endpointLatency: [LatencyHistogram] = []
    /// Dead tokens (unregistered, bad_token) by reason: what dead-tokens.csv holds, counted.
    public var deadByReason: [String: Int] = [:]
    /// The endpoint of the last answer: a run sends to a few, so the search is nearly always one compare.
    private var lastEndpoint = 0

    /// Index 0 through 5, then 6 or more.
    public static let attemptBuckets = 7

    public init() {}

    mutating func add(_ record: borrowing RowResult) {
        attempts[Swift.min(Swift.max(record.attempts, 0), Self.attemptBuckets - 1)] += 1
        if record.outcome.isDeadToken { deadByReason[record.reason ?? "", default: 0] += 1 }
        guard let latency = record.latencyMs, record.status != 0, let endpoint = record.endpoint else { return }
        recordLatency(milliseconds: latency, endpoint: endpoint)
    }

    /// Counts one latency under `endpoint`.
    public mutating func recordLatency(milliseconds: Double, endpoint: String) {
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

    /// Adds another tally (another shard's).
    public mutating func add(_ other: RunDetail) {
        for index in attempts.indices { attempts[index] += other.attempts[index] }
        for (reason, count) in other.deadByReason { deadByReason[reason, default: 0] += count }
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
