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
        // Clamped first: the bounds are whole, so clamping and rounding may go in either order.
        let micros = UInt64(min(max(milliseconds * 1000, 1), 600_000_000).nearestInt64)
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

    /// The latencies at several percentiles (ascending, 0...100) in ms, in one pass over the recorded
    /// values: what `milliseconds(atPercentile:)` gives each, for the report's many-point curves
    /// (each call of that walks the histogram from its start).
    package func milliseconds(atPercentiles percentiles: [Double]) -> [Double] {
        guard count > 0 else { return percentiles.map { _ in 0 } }
        let total = Double(count)
        let targets = percentiles.map { percentile in
            Swift.max(1, UInt64((Swift.min(Swift.max(percentile.nextDown, 0), 100) * total / 100).rounded(.up)))
        }
        var results = [Double](repeating: maxMilliseconds, count: percentiles.count)
        var next = 0
        var below: UInt64 = 0
        for step in histogram.recordedValues() where next < targets.count {
            below += UInt64(step.count)
            while next < targets.count && below >= targets[next] {
                results[next] = Double(Swift.min(step.value, histogram.maxRecorded)) / 1000
                next += 1
            }
        }
        return results
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

extension LatencyHistogram {
    /// Each recorded step's value in ms and count, ascending.
    package func steps() -> [(milliseconds: Double, count: Int)] {
        histogram.recordedValues().map { (Double($0.value) / 1000, Int($0.count)) }
    }
}
