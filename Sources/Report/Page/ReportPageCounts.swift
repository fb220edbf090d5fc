import APNs
import Pipeline

/// The report's count sections: outcomes, reasons (with the catalog's meaning and action),
/// attempts per row and dead tokens — exact counts from the records, never from the sidecar.
extension ReportPage {
    static func outcomesSection(_ summary: Summary, wouldSend: Int? = nil) -> String {
        let total = summary.counts.total
        let parts = Outcome.allCases.map { ($0.rawValue, summary.counts[$0], ReportPalette.color(of: $0)) }
        var rows = ["<tr><th>Outcome</th><th class=\"n\">Rows</th><th class=\"n\">Share</th></tr>"]
        for outcome in Outcome.allCases {
            let count = summary.counts[outcome]
            rows.append("<tr data-outcome=\"\(outcome.rawValue)\" data-count=\"\(count)\"><td><span class=\"swatch\" style=\"background:"
                        + "\(ReportPalette.color(of: outcome))\"></span>\(outcome.rawValue)</td><td class=\"n\">\(HTMLText.count(count))</td>"
                        + "<td class=\"n\">\(HTMLText.share(count, of: total))</td></tr>")
        }
        rows.append("<tr data-outcome=\"total\" data-count=\"\(total)\"><th>total</th><th class=\"n\">\(HTMLText.count(total))</th><th class=\"n\">"
                    + (total > 0 ? "100.00 %" : "—") + "</th></tr>")
        var note = ""
        if let wouldSend {
            note = "<p>A dry run: <span id=\"would-send\" data-count=\"\(wouldSend)\">\(HTMLText.count(wouldSend))</span> rows "
                + "passed every check and would be sent; nothing was sent.</p>"
        } else if total != summary.rows {
            note = "<p><strong>Accounting:</strong> \(HTMLText.count(summary.rows)) rows but \(HTMLText.count(total)) outcomes recorded.</p>"
        }
        return section("outcomes", "Outcomes", SVGChart.stacked(id: "chart-outcomes", parts: parts) + table(rows) + note)
    }

    static func reasonsSection(_ summary: Summary) -> String {
        guard !summary.byReason.isEmpty else {
            return section("reasons", "Why rows were not delivered", "<p>No row has a reason: every row was delivered.</p>\n")
        }
        let sorted = summary.byReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        var rows = ["<tr><th>Reason</th><th class=\"n\">Rows</th><th class=\"n\">Share</th><th>What it means</th><th>What to do</th></tr>"]
        for (reason, count) in sorted {
            let entry = ReasonCatalog.entry(named: reason)
            rows.append("<tr data-reason=\"\(HTMLText.escape(reason))\" data-count=\"\(count)\"><td><code>\(HTMLText.escape(reason))</code></td>"
                        + "<td class=\"n\">\(HTMLText.count(count))</td><td class=\"n\">\(HTMLText.share(count, of: summary.counts.total))</td>"
                        + "<td>\(HTMLText.escape(entry?.meaning ?? "Not in apns-bulk's catalog (a reason APNs added later?)."))</td>"
                        + "<td>\(HTMLText.escape(entry?.action ?? "See Apple's documentation for this reason."))</td></tr>")
        }
        return section("reasons", "Why rows were not delivered", table(rows))
    }

    static func attemptsSection(_ summary: Summary) -> String {
        let labels = ["never sent", "1", "2", "3", "4", "5", "6 or more"]
        let values = summary.detail.attempts
        var rows = ["<tr><th>Requests for the row</th><th class=\"n\">Rows</th></tr>"]
        for (label, value) in zip(labels, values) {
            rows.append("<tr data-attempts=\"\(HTMLText.escape(label))\" data-count=\"\(value)\"><td>\(label)</td><td class=\"n\">\(HTMLText.count(value))</td></tr>")
        }
        let chart = SVGChart.bars(id: "chart-attempts", labels: labels, values: values,
                                  colors: [ReportPalette.skyBlue, ReportPalette.green] + Array(repeating: ReportPalette.orange, count: 5),
                                  yUnit: "rows")
        return section("attempts", "Attempts per row", chart + table(rows))
    }

    static func deadTokensSection(_ campaign: ReportCampaign) -> String {
        let channels = campaign.runs.compactMap(\.deadChannelsPath)
        if !channels.isEmpty { return deadChannelsSection(campaign, paths: channels) }
        let dead = campaign.summary.detail.deadByReason
        let total = dead.values.reduce(0, +)
        var html = "<p><span id=\"dead-total\" data-count=\"\(total)\">\(HTMLText.count(total))</span> dead tokens "
            + "(unregistered and bad_token rows): the cleanup list"
        let paths = campaign.runs.compactMap(\.deadTokensPath)
        html += paths.isEmpty ? " (no dead-tokens.csv beside the log).</p>\n"
            : " is in " + paths.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: ", ") + ". The tokens themselves are never on this page.</p>\n"
        if !dead.isEmpty {
            var rows = ["<tr><th>Reason</th><th class=\"n\">Tokens</th></tr>"]
            for (reason, count) in dead.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                rows.append("<tr data-dead-reason=\"\(HTMLText.escape(reason))\" data-count=\"\(count)\"><td><code>\(HTMLText.escape(reason))</code></td>"
                            + "<td class=\"n\">\(HTMLText.count(count))</td></tr>")
            }
            html += table(rows)
        }
        html += deadByEnvironment(campaign.summary.detail.deadByEnvironment)
        return section("dead-tokens", "Dead tokens", html)
    }

    /// A broadcast's: the rows answered ChannelNotRegistered, whose channels the app's backend should forget.
    static func deadChannelsSection(_ campaign: ReportCampaign, paths: [String]) -> String {
        let total = campaign.summary.byReason[Reason.channelNotRegistered.name] ?? 0
        let html = "<p><span id=\"dead-total\" data-count=\"\(total)\">\(HTMLText.count(total))</span> rows answered "
            + "<code>ChannelNotRegistered</code>: their channels, to remove from the app's backend, are in "
            + paths.map { "<code>\(HTMLText.escape($0))</code>" }.joined(separator: ", ")
            + ". The channel IDs themselves are never on this page.</p>\n"
        return section("dead-channels", "Dead channels", html)
    }

    /// With several environments in play: the dead tokens of each, by reason. A token APNs calls
    /// dead in sandbox belongs to a TestFlight or debug build, so its cleanup is another list's.
    static func deadByEnvironment(_ dead: [DeadTokenKey: Int]) -> String {
        guard !dead.isEmpty else { return "" }
        var rows = ["<tr><th>Reason</th><th>Environment</th><th class=\"n\">Tokens</th></tr>"]
        let ordered = dead.sorted { ($0.key.environment, $1.value, $0.key.reason) < ($1.key.environment, $0.value, $1.key.reason) }
        for (key, count) in ordered {
            let reason = HTMLText.escape(key.reason), environment = HTMLText.escape(key.environment)
            rows.append("<tr data-dead-by-environment=\"\(reason) \(environment)\" data-count=\"\(count)\"><td><code>\(reason)</code></td>"
                        + "<td>\(environment)</td><td class=\"n\">\(HTMLText.count(count))</td></tr>")
        }
        return "<p>By environment: a token dead in sandbox (a TestFlight or debug build's) is not dead in production, "
            + "and the other way round; each record's <code>environment</code> says which.</p>\n" + table(rows)
    }
}
