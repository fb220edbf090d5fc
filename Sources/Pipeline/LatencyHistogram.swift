import Histogram

/// Response latencies in microseconds (1 µs to 10 min, 3 significant digits), reported in ms.
public struct LatencyHistogram: Sendable {
    private var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000,
                                              numberOfSignificantValueDigits: .three)

    public init() {}

    public mutating func record(milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds >= 0 else { return }
        let micros = UInt64(min(max((milliseconds * 1000).rounded(), 1), 600_000_000))
        _ = histogram.record(micros)
    }

    public mutating func add(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    public var count: Int { Int(histogram.totalCount) }

    /// The latency at `percentile` (0...100) in ms; 0 when nothing was recorded.
    public func milliseconds(atPercentile percentile: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    public var maxMilliseconds: Double { count == 0 ? 0 : Double(histogram.max) / 1000 }
}
