import Pipeline
#if canImport(Glibc)
import Glibc
#endif

/// report.html in a campaign's `--out`: written by every run at its end (aborted and interrupted
/// ones too, and a resumed one, which covers the whole campaign: the summary holds every run's
/// records and the sidecar every run's seconds). Built from what the run holds in memory and the
/// sidecar (one line a second), never by reading the result log again.
public enum ReportPageFile {
    /// The page's name beside summary.json.
    public static let name = "report.html"

    /// Writes `directory`/report.html for a run whose summary is `summary` (and `summaryJSON`).
    static func write(directory: String, summary: Summary, summaryJSON: String) throws(OutputFileError) {
        let logPath = directory + "/results.jsonl.zst"
        // A broadcast's run lists dead channels, not tokens (written and closed before the page).
        let deadChannels = directory + "/" + BroadcastCampaign.deadChannelsFile
        let broadcast = access(deadChannels, F_OK) == 0
        var run = ReportRun(logPath: logPath, summary: summary, header: ReportHeader(summaryJSON: Array(summaryJSON.utf8)),
                            timeline: TimelineFile.read(path: directory + "/" + TimelineFile.name)?.lines,
                            deadTokensPath: broadcast ? nil : directory + "/dead-tokens.csv")
        if broadcast { run.deadChannelsPath = deadChannels }
        try write(page: ReportPage.render(ReportCampaign(runs: [run])), to: directory + "/" + name)
    }

    /// Writes a page (replacing the file whole: a reader never sees half a page).
    public static func write(page: String, to path: String) throws(OutputFileError) {
        try OutputFile.write(Array(page.utf8), to: path, atomically: true)
    }
}
