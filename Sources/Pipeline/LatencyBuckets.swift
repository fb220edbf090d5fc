/// A coarse latency histogram: counts per log bucket (1, 2.5, 5 per decade, 100 µs to 10 s, then
/// the rest), the shape of Prometheus' `_bucket{le=...}` series and of the per-second histograms a
/// report merges across shards and resumes before it computes percentiles.
public struct LatencyBuckets: Sendable, Equatable {
    /// The buckets' upper bounds in seconds; a last bucket (+Inf) holds everything above.
    public static let upperBoundsSeconds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    static let upperBoundsMicroseconds: [UInt64] = upperBoundsSeconds.map { UInt64(($0 * 1e6).rounded()) }

    /// Latencies at or below each bound of `upperBoundsSeconds` (cumulative, as Prometheus'
    /// `le` buckets count).
    public var cumulative: [Int]
    /// All latencies (the +Inf bucket).
    public var count: Int
    /// Their sum in seconds.
    public var sumSeconds: Double

    /// Nothing recorded.
    public init() {
        cumulative = [Int](repeating: 0, count: Self.upperBoundsSeconds.count)
        count = 0
        sumSeconds = 0
    }

    /// The buckets of everything `histogram` holds.
    init(_ histogram: LatencyHistogram) {
        let (counts, sum) = histogram.cumulativeCounts(atOrBelowMicroseconds: Self.upperBoundsMicroseconds)
        cumulative = counts
        count = histogram.count
        sumSeconds = sum / 1000
    }

    /// What was recorded after `earlier`: one second's histogram from two running totals.
    public func since(_ earlier: LatencyBuckets) -> LatencyBuckets {
        var delta = self
        for index in delta.cumulative.indices { delta.cumulative[index] -= earlier.cumulative[index] }
        delta.count -= earlier.count
        delta.sumSeconds = Swift.max(0, sumSeconds - earlier.sumSeconds)
        return delta
    }
}
