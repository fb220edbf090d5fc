/// A coarse latency histogram: counts per log bucket (1, 2.5, 5 per decade, 100 µs to 10 s, then
/// the rest), the shape of Prometheus' `_bucket{le=...}` series and of the per-second histograms a
/// report merges across shards and resumes before it computes percentiles. The writer thread
/// records every answered row here (a few comparisons and an increment), so that reading it once
/// a second costs nothing like a pass over the summary's fine-grained histogram.
public struct LatencyBuckets: Sendable, Equatable {
    /// The buckets' upper bounds in seconds; a last bucket (+Inf) holds everything above.
    public static let upperBoundsSeconds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    static let upperBoundsMicroseconds: [UInt64] = upperBoundsSeconds.map { UInt64(($0 * 1e6).rounded()) }

    /// Latencies per bucket (not cumulative): one entry per bound of `upperBoundsSeconds` (above
    /// the previous bound, at or below this one), then one for everything above 10 s.
    public var counts: [Int]
    /// The sum of all latencies in seconds.
    public var sumSeconds: Double

    /// Nothing recorded.
    public init() {
        counts = [Int](repeating: 0, count: Self.upperBoundsSeconds.count + 1)
        sumSeconds = 0
    }

    /// The buckets of everything `histogram` holds (a resumed campaign's earlier latencies).
    init(_ histogram: LatencyHistogram) {
        let (cumulative, sum) = histogram.cumulativeCounts(atOrBelowMicroseconds: Self.upperBoundsMicroseconds)
        counts = zip(cumulative, [0] + cumulative).map { $0 - $1 } + [histogram.count - (cumulative.last ?? 0)]
        sumSeconds = sum / 1000
    }

    /// Latencies at or below each bound of `upperBoundsSeconds`, as Prometheus' `le` buckets count.
    public var cumulative: [Int] {
        var running = 0
        return counts.dropLast().map { running += $0; return running }
    }

    /// All latencies (the +Inf bucket).
    public var count: Int { counts.reduce(0, +) }

    /// Counts one latency.
    @inline(__always)
    mutating func record(milliseconds: Double) {
        counts[Self.bucket(microseconds: milliseconds * 1000)] += 1
        sumSeconds += milliseconds / 1000
    }

    /// The bucket of a latency: a fixed tree of comparisons over `upperBoundsMicroseconds`.
    @inline(__always)
    static func bucket(microseconds v: Double) -> Int {
        if v <= 5000 {
            if v <= 500 { return v <= 100 ? 0 : v <= 250 ? 1 : 2 }
            return v <= 1000 ? 3 : v <= 2500 ? 4 : 5
        }
        if v <= 250_000 {
            if v <= 25000 { return v <= 10000 ? 6 : 7 }
            return v <= 50000 ? 8 : v <= 100_000 ? 9 : 10
        }
        if v <= 1_000_000 { return v <= 500_000 ? 11 : 12 }
        return v <= 2_500_000 ? 13 : v <= 5_000_000 ? 14 : v <= 10_000_000 ? 15 : 16
    }

    /// What was recorded after `earlier`: one second's histogram from two running totals.
    public func since(_ earlier: LatencyBuckets) -> LatencyBuckets {
        var delta = self
        for index in delta.counts.indices { delta.counts[index] -= earlier.counts[index] }
        delta.sumSeconds = Swift.max(0, sumSeconds - earlier.sumSeconds)
        return delta
    }
}
