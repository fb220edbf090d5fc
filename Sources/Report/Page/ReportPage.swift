import Pipeline

/// report.html: one self-contained page about a campaign — inline CSS and SVG, no script, no
/// external resource, so it renders from a `file://` path with no network. Every value from input
/// is escaped (`HTMLText`); each chart has a table or labels beside it; colours are Okabe–Ito's.
/// Built at the end of every run (`CampaignExporter.reportPage`) and by `apns-bulk report --html`.
public enum ReportPage {
    /// The page for `campaign`.
    public static func render(_ campaign: ReportCampaign) -> String {
        var body = headerSection(campaign)
        if campaign.runs.count > 1 { body += shardsSection(campaign) }
        body += outcomesSection(campaign.summary, wouldSend: campaign.runs.count == 1 ? campaign.header.wouldSend : nil)
        body += reasonsSection(campaign.summary)
        let bins = campaign.timelines.isEmpty ? nil : TimelineBins(sources: campaign.timelines)
        let dryRun = campaign.header.dryRun
        body += throughputSection(bins, missing: campaign.timelineMissing, dryRun: dryRun)
        body += latencySection(campaign.summary)
        body += latencyOverTimeSection(bins, shape: LatencyShape(run: campaign),
                                       dryRun: dryRun)
        body += attemptsSection(campaign.summary)
        body += connectionsSection(bins, dryRun: dryRun)
        body += deadTokensSection(campaign)
        return document(title: "apns-bulk report: " + (campaign.header.input.map(baseName) ?? campaign.runs.first?.logPath ?? ""),
                        body: body)
    }

    /// The page around `body`.
    static func document(title: String, body: String) -> String {
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            + "<title>\(HTMLText.escape(title))</title><style>\(css)</style></head><body>\n"
            + "<h1>\(HTMLText.escape(title))</h1>\n" + body
            + "<footer>Written by apns-bulk \(HTMLText.escape(Version.current)). Hover a chart for its values; "
            + "every chart's numbers are in the table under it.</footer>\n</body></html>\n"
    }

    static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;max-width:960px;margin:1.5em auto;padding:0 1em}
        h1{font-size:1.5em;word-break:break-all}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
        table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
        td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}svg.chart{width:100%;height:auto;display:block}
        .legend span{margin-right:1.2em;white-space:nowrap}.not-recorded{color:#555;font-style:italic;padding:1em;border:1px dashed #999}
        .swatch{display:inline-block;width:.9em;height:.9em;border:1px solid #333;vertical-align:middle;margin-right:.3em}
        .hover rect:hover{fill:rgba(0,0,0,.06)}details{margin:.4em 0}footer{margin-top:3em;color:#555;font-size:.9em}
        code{overflow-wrap:break-word}
        """

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    static func section(_ id: String, _ title: String, _ content: String) -> String {
        "<section id=\"\(id)\"><h2>\(HTMLText.escape(title))</h2>\n\(content)</section>\n"
    }

    static func notRecorded(_ what: String, dryRun: Bool = false) -> String {
        "<p class=\"not-recorded\" data-not-recorded=\"true\">\(HTMLText.escape(what)): not recorded. "
            + (dryRun ? "This was a dry run (--dry-run): nothing was sent, so nothing happened over time; the counts "
                + "above are of the rows checked, and `would_send` in summary.json counts the rows that would be sent.</p>\n"
               : "This log has no \(TimelineFile.name) beside it (it was copied alone, or written before apns-bulk "
                + "recorded one); the counts, reasons and latencies above come from its records.</p>\n")
    }

    private static func headerSection(_ campaign: ReportCampaign) -> String {
        let header = campaign.header
        var rows: [(String, String)] = []
        if let input = header.input { rows.append(("Input", "<code>\(HTMLText.escape(input))</code>")) }
        if let size = header.fingerprintSize {
            rows.append(("Fingerprint", "\(HTMLText.count(size)) bytes, sample SHA-256 <code>\(HTMLText.escape(header.fingerprintSHA256 ?? ""))</code>"))
        }
        let span = campaign.span
        let started = span.map { HTMLText.utc($0.start) } ?? header.startedAt
        if let started { rows.append(("Started (UTC)", HTMLText.escape(started))) }
        if let finished = header.finishedAt ?? span.map({ HTMLText.utc($0.end) }) { rows.append(("Finished (UTC)", HTMLText.escape(finished))) }
        if let span { rows.append(("Duration", HTMLText.duration(span.end - span.start) + " (wall clock, first run's start to last run's end)")) }
        else if let elapsed = header.elapsedSeconds { rows.append(("Duration", HTMLText.duration(elapsed))) }
        if let status = header.exitStatus {
            rows.append(("Exit status", "<span id=\"exit-status\" data-exit-status=\"\(status)\">\(status)</span>: "
                         + HTMLText.escape(ReportHeader.meaning(ofExitStatus: status))))
        }
        if let rate = campaign.answeredPerSecond { rows.append(("Rate", HTMLText.count(Int(rate.rounded())) + " notifications/s answered")) }
        rows.append(("Rows", "<span id=\"rows\" data-count=\"\(campaign.summary.rows)\">\(HTMLText.count(campaign.summary.rows))</span>"))
        if let version = header.version { rows.append(("apns-bulk", HTMLText.escape(version))) }
        if !header.endpoints.isEmpty {
            rows.append(("Endpoints", header.endpoints.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: ", ")))
        }
        if let connections = header.connections { rows.append(("Connections", HTMLText.count(connections))) }
        if let shard = header.shard, campaign.runs.count == 1 { rows.append(("Shard", HTMLText.escape(shard))) }
        let starts = campaign.timelines.map { $0.filter { if case .event(let e) = $0 { e.kind == "start" } else { false } }.count }
        if campaign.runs.count == 1, let parts = starts.first, parts > 1 {
            rows.append(("Runs", "\(parts) (a resumed campaign: the page covers every run)"))
        }
        var html = table(rows.map { "<tr><th>\(HTMLText.escape($0.0))</th><td>\($0.1)</td></tr>" })
        for (title, breakdown) in [("By key", header.byKey), ("By environment", header.byEnvironment)] where !breakdown.isEmpty {
            html += "<h3>\(title)</h3>" + table(breakdown.map { item in
                "<tr><th>\(HTMLText.escape(item.name))</th><td>"
                    + item.counts.map { "\(HTMLText.escape($0.0)) \(HTMLText.count($0.1))" }.joined(separator: ", ") + "</td></tr>"
            })
        }
        return section("header", "The run", html)
    }

    private static func shardsSection(_ campaign: ReportCampaign) -> String {
        let head = "<tr><th>Log</th><th>Shard</th><th class=\"n\">Rows</th>"
            + Outcome.allCases.map { "<th class=\"n\">\($0.rawValue)</th>" }.joined() + "<th>Exit status</th><th>Sidecar</th></tr>"
        let rows = campaign.runs.map { run in
            "<tr data-shard-log=\"\(HTMLText.escape(run.logPath))\"><td><code>\(HTMLText.escape(run.logPath))</code></td>"
                + "<td>\(HTMLText.escape(run.header?.shard ?? "—"))</td><td class=\"n\" data-count=\"\(run.summary.counts.total)\">\(HTMLText.count(run.summary.counts.total))</td>"
                + Outcome.allCases.map { "<td class=\"n\">\(HTMLText.count(run.summary.counts[$0]))</td>" }.joined()
                + "<td>\(run.header?.exitStatus.map(String.init) ?? "—")</td><td>\(run.timeline == nil ? "not recorded" : "yes")</td></tr>"
        }
        return section("shards", "Shards (\(campaign.runs.count) logs, one campaign)", table([head] + rows))
    }

    static func table(_ rows: [String]) -> String { "<table>" + rows.joined() + "</table>\n" }
}
