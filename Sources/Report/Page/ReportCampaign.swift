import Pipeline

/// What one page is about: the runs (a run, a resumed campaign, or several shards) merged — counts,
/// reasons, latency histograms and details add up exactly, and the sidecars' seconds go on one
/// wall-clock axis. The page is rendered from this alone.
public struct ReportCampaign: Sendable {
    public let runs: [ReportRun]
    /// Every run's counts, reasons, latencies and details, added.
    public let summary: Summary
    /// The first run's header, with what the others add (endpoints, connections, times, the worst exit status).
    public let header: ReportHeader
    /// The sidecars' lines, one array per run that has one.
    public let timelines: [[TimelineLine]]

    public init(runs: [ReportRun]) {
        self.runs = runs
        var summary = Summary()
        var header = runs.first?.header ?? ReportHeader()
        for (index, run) in runs.enumerated() {
            summary.rows += run.summary.rows
            summary.counts.add(run.summary.counts)
            for (reason, count) in run.summary.byReason { summary.byReason[reason, default: 0] += count }
            summary.detail.add(run.summary.detail, own: summary.latency, others: run.summary.latency)
            summary.latency.add(run.summary.latency)
            summary.retriedRows += run.summary.retriedRows
            guard index > 0, let other = run.header else { continue }
            for endpoint in other.endpoints where !header.endpoints.contains(endpoint) { header.endpoints.append(endpoint) }
            header.connections = (header.connections ?? 0) + (other.connections ?? 0)
            header.startedAt = [header.startedAt, other.startedAt].compactMap { $0 }.min()
            header.finishedAt = [header.finishedAt, other.finishedAt].compactMap { $0 }.max()
            header.exitStatus = Self.worse(header.exitStatus, other.exitStatus)
            header.notificationsPerSecond = nil
            header.elapsedSeconds = nil
        }
        self.summary = summary
        self.header = header
        timelines = runs.compactMap(\.timeline)
    }

    /// Whether some run's sidecar is missing (older logs, or a log copied alone).
    public var timelineMissing: Bool { timelines.count < runs.count }

    /// The campaign's first and last moment on the wall clock, from the sidecars; nil without one.
    public var span: (start: Double, end: Double)? {
        guard !timelines.isEmpty else { return nil }
        let extent = TimelineBins.extent(timelines)
        return extent.end > extent.start ? extent : nil
    }

    /// Rows APNs answered for good per second of sending: the sidecar's seconds when there is
    /// one (a resumed campaign's runs together), else summary.json's rate of a single run.
    public var answeredPerSecond: Double? {
        var answered = 0, seconds = 0.0
        for line in timelines.joined() {
            if case .second(let second) = line { answered += second.answered; seconds += second.seconds }
        }
        if seconds > 0 { return Double(answered) / (seconds / Double(Swift.max(1, timelines.count))) }
        return runs.count == 1 ? header.notificationsPerSecond : nil
    }

    /// An exit status of 2 (aborted) outranks 3 (gave up), which outranks 0.
    private static func worse(_ a: Int?, _ b: Int?) -> Int? {
        guard let a, let b else { return a ?? b }
        func rank(_ status: Int) -> Int { status == 2 ? 3 : status == 3 ? 2 : status == 0 ? 0 : 1 }
        return rank(a) >= rank(b) ? a : b
    }
}
