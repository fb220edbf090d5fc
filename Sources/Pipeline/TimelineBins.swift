import Foundation

/// Sidecar seconds put on a page's time axis: bins of `width` whole seconds from `origin`, so that
/// 36,000 seconds make at most `maxBins` points (the page stays small) while every count is kept.
/// Several sources (shards; or a campaign's runs, which never overlap) add up bin by bin: counters
/// add, the gauges (open connections, in flight) are each source's last value in the bin, added.
public struct TimelineBins: Sendable {
    /// Unix seconds where bin 0 starts.
    public let origin: Double
    /// Seconds per bin.
    public let width: Int
    /// Each bin's sums; nil where no source recorded anything (before a resume, say).
    public private(set) var bins: [TimelineSecond?]
    /// Every source's events, by time.
    public private(set) var events: [TimelineEvent] = []

    /// The seconds and events of `sources` over `[origin, origin + span)`; `width` nil picks the
    /// smallest that keeps to `maxBins`.
    public init(sources: [[TimelineLine]], origin: Double? = nil, span: Double? = nil, width: Int? = nil,
                maxBins: Int = 600) {
        let extent = Self.extent(sources)
        let origin = origin ?? extent.start.rounded(.down)
        let span = span ?? Swift.max(1, extent.end - origin)
        let width = width ?? Self.width(span: span, maxBins: maxBins)
        self.origin = origin
        self.width = width
        bins = Array(repeating: nil, count: Swift.max(1, Int((span / Double(width)).rounded(.up))))
        for source in sources { add(source) }
        events.sort { $0.time < $1.time }
    }

    /// The earliest moment (a second's start, or an event) and the latest of any line in `sources`.
    public static func extent(_ sources: [[TimelineLine]]) -> (start: Double, end: Double) {
        var start = Double.infinity, end = -Double.infinity
        for line in sources.joined() {
            switch line {
            case .second(let second):
                start = Swift.min(start, second.time - second.seconds)
                end = Swift.max(end, second.time)
            case .event(let event):
                start = Swift.min(start, event.time)
                end = Swift.max(end, event.time)
            }
        }
        guard start.isFinite else { return (0, 0) }
        return (start, end)
    }

    /// The bin width (whole seconds) that puts `span` seconds in at most `maxBins` bins.
    public static func width(span: Double, maxBins: Int) -> Int {
        Swift.max(1, Int((span / Double(Swift.max(1, maxBins))).rounded(.up)))
    }

    /// The bin a moment falls in (a second ending exactly on a boundary belongs to the bin before),
    /// nil outside the axis.
    public func bin(of time: Double) -> Int? {
        let index = Int(((time - origin) / Double(width) - 1e-9).rounded(.down))
        return index >= 0 && index < bins.count ? index : nil
    }

    private mutating func add(_ source: [TimelineLine]) {
        var own = [TimelineSecond?](repeating: nil, count: bins.count)
        var gaugeTime = [Double](repeating: -.infinity, count: bins.count)
        for line in source {
            switch line {
            case .event(let event):
                events.append(event)
            case .second(let second):
                guard let index = bin(of: second.time) else { continue }
                var sum = own[index] ?? TimelineSecond(time: origin + Double((index + 1) * width), seconds: 0)
                sum.addCounters(second)
                sum.seconds += second.seconds
                if second.time >= gaugeTime[index] {
                    gaugeTime[index] = second.time
                    (sum.connectionsOpen, sum.inFlight) = (second.connectionsOpen, second.inFlight)
                }
                own[index] = sum
            }
        }
        for index in bins.indices {
            guard let mine = own[index] else { continue }
            guard var sum = bins[index] else { bins[index] = mine; continue }
            sum.addCounters(mine)
            sum.seconds = Swift.max(sum.seconds, mine.seconds)
            sum.connectionsOpen += mine.connectionsOpen
            sum.inFlight += mine.inFlight
            bins[index] = sum
        }
    }
}

extension LatencyBuckets {
    /// An estimate of the latency at `percentile` (0...100) in ms from the buckets alone: the
    /// bucket that holds it, interpolated on a log scale between its bounds (the last bucket
    /// reads as its lower bound, 10 s). Nil when nothing was recorded.
    public func estimatedMilliseconds(atPercentile percentile: Double) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        let rank = Swift.max(1, (percentile / 100 * Double(total)).rounded(.up))
        var below = 0.0
        let bounds = Self.upperBoundsSeconds
        for (index, count) in counts.enumerated() where count > 0 {
            if below + Double(count) >= rank {
                guard index < bounds.count else { return bounds[bounds.count - 1] * 1000 }
                let upper = bounds[index] * 1000
                let lower = index == 0 ? upper / 10 : bounds[index - 1] * 1000
                let fraction = (rank - below) / Double(count)
                return lower * pow10(log10ratio: fraction * log10(upper / lower))
            }
            below += Double(count)
        }
        return bounds[bounds.count - 1] * 1000
    }
}

private func log10(_ value: Double) -> Double { log(value) / log(10) }
private func pow10(log10ratio: Double) -> Double { exp(log10ratio * log(10)) }
