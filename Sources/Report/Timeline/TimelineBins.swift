import Foundation
import Pipeline

/// Sidecar seconds put on a page's time axis: bins of `width` seconds from `origin`, so that
/// 36,000 seconds make at most `maxBins` points (the page stays small) while every count is kept.
/// A sidecar line covers `[time - seconds, time]`, which seldom matches a bin: its counts are
/// shared among the bins it overlaps in proportion to the overlap (whole counts, rounded so that
/// they add up to the line's), so each bin holds one bin-width of each source, never a second and
/// a bit of it. Bins are whole seconds, or a quarter of one for a short run whose sidecar records
/// quarters (`RunRecorder.fineSlice`: a run's first minute). Several sources (shards; or a
/// campaign's runs, which never overlap) add up bin by bin: counters add, the gauges (open
/// connections, in flight) are each source's last value in the bin, added.
public struct TimelineBins: Sendable {
    /// Unix seconds where bin 0 starts.
    public let origin: Double
    /// Seconds per bin: whole seconds, or `RunRecorder`'s quarter for a short run recorded so.
    public let width: Double
    /// Each bin's sums (its `seconds`: how much of the bin the sources' lines covered); nil where
    /// no source recorded anything (before a resume, say).
    public private(set) var bins: [TimelineSecond?]
    /// Every source's events, by time.
    public private(set) var events: [TimelineEvent] = []

    /// The seconds and events of `sources` over `[origin, origin + span)`; `width` nil picks the
    /// smallest that keeps to `maxBins` and is no finer than the sources' lines.
    public init(sources: [[TimelineLine]], origin: Double? = nil, span: Double? = nil, width: Double? = nil,
                maxBins: Int = 600) {
        let extent = Self.extent(sources)
        let resolution = Self.resolution(sources)
        let origin = origin ?? (extent.start / resolution).rounded(.down) * resolution
        let span = span ?? Swift.max(resolution, extent.end - origin)
        let width = width ?? Self.width(span: span, maxBins: maxBins, resolution: resolution)
        self.origin = origin
        self.width = width
        bins = Array(repeating: nil, count: Swift.max(1, Int((span / width - 1e-9).rounded(.up))))
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

    /// The finest bin the sources' lines support: a quarter second when most lines are quarters
    /// (a short run's, `RunRecorder.fineSlice`), else a second (older sidecars, long runs).
    public static func resolution(_ sources: [[TimelineLine]]) -> Double {
        var quarters = 0, others = 0
        for case .second(let second) in sources.joined() {
            if second.seconds < 0.5 { quarters += 1 } else { others += 1 }
        }
        return quarters > others ? 0.25 : 1
    }

    /// The bin width that puts `span` seconds in at most `maxBins` bins: whole seconds, or
    /// quarters while `resolution` is a quarter and quarters will do.
    public static func width(span: Double, maxBins: Int, resolution: Double = 1) -> Double {
        let needed = span / Double(Swift.max(1, maxBins))
        if resolution < 1 && needed <= 1 { return Swift.max(resolution, (needed / resolution).rounded(.up) * resolution) }
        return Swift.max(1, needed.rounded(.up))
    }

    /// The bin a moment falls in (a moment exactly on a boundary belongs to the bin before), nil
    /// outside the axis.
    public func bin(of time: Double) -> Int? {
        let index = Int(((time - origin) / width - 1e-9).rounded(.down))
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
                for (index, part, covered) in shares(of: second) {
                    var sum = own[index] ?? TimelineSecond(time: origin + Double(index + 1) * width, seconds: 0)
                    sum.addCounters(part)
                    sum.seconds += covered
                    if second.time >= gaugeTime[index] {
                        gaugeTime[index] = second.time
                        (sum.connectionsOpen, sum.inFlight) = (second.connectionsOpen, second.inFlight)
                    }
                    own[index] = sum
                }
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

    /// `second`'s counters shared among the bins its span overlaps, each with the time it covers
    /// there: whole counts, each bin taking the rounded cumulative share less the bins' before it,
    /// so the parts add up to the line exactly. A line of no length (or one outside the axis but
    /// for its end) goes whole to the bin of its end.
    private func shares(of second: TimelineSecond) -> [(index: Int, part: TimelineSecond, covered: Double)] {
        let end = second.time, start = second.time - Swift.max(0, second.seconds)
        guard end - start > 1e-9, let last = bin(of: end) else {
            return bin(of: end).map { [($0, second, Swift.max(0, second.seconds))] } ?? []
        }
        let first = Swift.max(0, Int(((start - origin) / width).rounded(.down)))
        guard first < last else { return [(last, second, end - start)] }
        var result: [(index: Int, part: TimelineSecond, covered: Double)] = []
        var before = second.scaled(by: 0)
        for index in first...last {
            let binEnd = Swift.min(end, origin + Double(index + 1) * width)
            let covered = binEnd - Swift.max(start, origin + Double(index) * width)
            guard covered > 0 else { continue }
            let upTo = index == last ? second : second.scaled(by: (binEnd - start) / (end - start))
            var part = upTo
            part.subtractCounters(before)
            before = upTo
            result.append((index, part, covered))
        }
        return result
    }
}

extension LatencyBuckets {
    /// An estimate of the latency at `percentile` (0...100) in ms from the buckets alone: the
    /// bucket that holds it, and within it the point as far along the records' own latencies in
    /// that bucket (`shape`, the run's fine histogram) as the rank is along the bucket's count. So
    /// it is a latency some row had, never above the records' maximum. Without a shape (or with
    /// none of its latencies in that bucket), interpolated on a log scale between the bucket's
    /// bounds, capped at the shape's maximum (the last bucket reads as its lower bound, 10 s).
    /// Nil when nothing was recorded.
    public func estimatedMilliseconds(atPercentile percentile: Double, shape: LatencyShape? = nil) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        let cap = shape.flatMap { $0.maxMilliseconds > 0 ? $0.maxMilliseconds : nil } ?? .infinity
        let rank = Swift.max(1, (percentile / 100 * Double(total)).rounded(.up))
        var below = 0.0
        let bounds = Self.upperBoundsSeconds
        for (index, count) in counts.enumerated() where count > 0 {
            if below + Double(count) >= rank {
                let fraction = (rank - below) / Double(count)
                let lower = index == 0 ? 0 : bounds[index - 1] * 1000
                let upper = index < bounds.count ? bounds[index] * 1000 : .infinity
                if let shape {
                    let (first, last) = (shape.count(atOrBelow: lower), shape.count(atOrBelow: upper))
                    if last > first {
                        let along = first + Swift.max(1, Int((fraction * Double(last - first)).rounded(.up)))
                        return Swift.min(Swift.max(shape.value(atRank: along), lower), upper, cap)
                    }
                }
                guard index < bounds.count else { return Swift.min(lower, cap) }
                let top = Swift.min(upper, cap), bottom = Swift.min(index == 0 ? upper / 10 : lower, top)
                guard top > bottom else { return top }
                return bottom * pow10(log10ratio: fraction * log10(top / bottom))
            }
            below += Double(count)
        }
        return Swift.min(bounds[bounds.count - 1] * 1000, cap)
    }
}

private func log10(_ value: Double) -> Double { log(value) / log(10) }
private func pow10(log10ratio: Double) -> Double { exp(log10ratio * log(10)) }
