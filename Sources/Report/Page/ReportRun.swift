import Pipeline
#if canImport(Glibc)
import Glibc
#endif

/// One result log's share of a page (a run, a resumed campaign, or one shard): its counts, reasons,
/// latencies and details (a `Summary` built from its records, or the run's own), its sidecar's
/// lines (nil when it has none) and its summary.json's header.
public struct ReportRun: Sendable {
    /// The result log, or the `--out` directory's, as given.
    public var logPath: String
    public var summary: Summary
    public var header: ReportHeader?
    public var timeline: [TimelineLine]?
    /// dead-tokens.csv beside the log, when it exists.
    public var deadTokensPath: String?
    /// A broadcast's dead-channels.csv beside the log, when it exists: the run was a broadcast's.
    public var deadChannelsPath: String?
    /// Complete records a crash's cut last frame still held (`report` counts them), if cut.
    public var cutFrame: CutFrame?

    public init(logPath: String, summary: Summary, header: ReportHeader?, timeline: [TimelineLine]?,
                deadTokensPath: String?) {
        self.logPath = logPath
        self.summary = summary
        self.header = header
        self.timeline = timeline
        self.deadTokensPath = deadTokensPath
    }

    /// A result log read from disk, with the sidecar and summary.json beside it when they are there.
    /// `path` may be an `--out` directory. Throws only when the log itself cannot be read.
    public static func load(path given: String) throws(ResultLogError) -> ReportRun {
        let logPath = Self.logPath(given)
        var summary = Summary()
        let tally = try ResultLogTally.read(path: logPath) { summary.add($0) }
        summary.rows = tally.rows
        let directory = TimelineFile.path(besideLog: logPath).dropLast(TimelineFile.name.count)
        let deadTokens = String(directory) + "dead-tokens.csv"
        var run = ReportRun(logPath: logPath, summary: summary,
                            header: ReportHeader(summaryPath: String(directory) + "summary.json"),
                            timeline: TimelineFile.read(path: TimelineFile.path(besideLog: logPath))?.lines,
                            deadTokensPath: fileExists(deadTokens) ? deadTokens : nil)
        run.cutFrame = tally.cutFrame
        let deadChannels = String(directory) + BroadcastCampaign.deadChannelsFile
        if fileExists(deadChannels) { run.deadChannelsPath = deadChannels }
        return run
    }

    /// The result log `path` names: itself, or the one in the `--out` directory it is.
    public static func logPath(_ path: String) -> String {
        isDirectory(path) ? path + (path.hasSuffix("/") ? "" : "/") + "results.jsonl.zst" : path
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
