import Histogram

/// Response latencies in microseconds (1 µs to 10 min, 3 significant digits), reported in ms.
public struct LatencyHistogram: Sendable {
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000,
                                              numberOfSignificantValueDigits: .three)

    /// Empty.
    public init() {}

    /// Records one latency; one below 1 µs counts as 1 µs, one above 10 min as 10 min.
    public mutating func record(milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds >= 0 else { return }
        let micros = UInt64(min(max((milliseconds * 1000).rounded(), 1), 600_000_000))
        _ = histogram.record(micros)
    }

    /// Merges `other` in (a resumed campaign's earlier runs).
    public mutating func add(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    /// Latencies recorded.
    public var count: Int { Int(histogram.totalCount) }

    /// The latency at `percentile` (0...100) in ms; 0 when nothing was recorded.
    public func milliseconds(atPercentile percentile: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    /// The largest latency recorded, in ms; 0 when none.
    public var maxMilliseconds: Double { count == 0 ? 0 : Double(histogram.max) / 1000 }

    /// Latencies at or below each of `bounds` (µs, ascending), and the sum of all in ms: one pass
    /// over the recorded values, for `LatencyBuckets` (to the histogram's 3 significant digits).
    func cumulativeCounts(atOrBelowMicroseconds bounds: [UInt64]) -> (counts: [Int], sumMilliseconds: Double) {
        var counts = [Int](repeating: 0, count: bounds.count)
        var next = 0
        var below = 0
        for step in histogram.recordedValues() {
            while next < bounds.count && step.value > bounds[next] {
                counts[next] = below
                next += 1
            }
            below += Int(step.count)
        }
        while next < bounds.count {
            counts[next] = below
            next += 1
        }
        return (counts, count == 0 ? 0 : histogram.mean * Double(count) / 1000)
    }
}
