import Pipeline

/// The records' latencies as ascending steps (a value in ms, and how many latencies are at or
/// below it), read from the fine histogram once: the shape the report draws a sidecar bin's coarse
/// buckets along (`LatencyBuckets.estimatedMilliseconds(atPercentile:shape:)`), and its maximum.
public struct LatencyShape: Sendable {
    private var values: [Double] = []
    private var cumulative: [Int] = []
    /// The largest latency recorded, in ms.
    public let maxMilliseconds: Double

    /// The shape of everything `histogram` holds.
    public init(_ histogram: LatencyHistogram) {
        maxMilliseconds = histogram.maxMilliseconds
        var below = 0
        for step in histogram.steps() where step.count > 0 {
            below += step.count
            values.append(Swift.min(step.milliseconds, maxMilliseconds))
            cumulative.append(below)
        }
    }

    /// The shape of a campaign's records' latencies; nil when none was recorded.
    init?(run campaign: ReportCampaign) {
        guard campaign.summary.latency.count > 0 else { return nil }
        self.init(campaign.summary.latency)
    }

    /// Latencies at or below `milliseconds`.
    func count(atOrBelow milliseconds: Double) -> Int {
        var (low, high) = (0, values.count)
        while low < high {
            let middle = (low + high) / 2
            if values[middle] <= milliseconds { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? 0 : cumulative[low - 1]
    }

    /// The latency of rank `rank` (1 = the smallest).
    func value(atRank rank: Int) -> Double {
        var (low, high) = (0, cumulative.count - 1)
        guard high >= 0 else { return 0 }
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] >= rank { high = middle } else { low = middle + 1 }
        }
        return values[low]
    }
}
