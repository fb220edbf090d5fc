import Pipeline

/// The report's time charts, from the sidecar's seconds binned on one wall-clock axis: throughput
/// (with GOAWAYs, resets, reconnects, 429s, token refreshes, runs' starts and stops marked),
/// latency over time and connections. Without a sidecar each says "not recorded".
extension ReportPage {
    /// At most this many rows in a time chart's table (its chart has up to 600 points).
    static let tableRows = 120

    static func throughputSection(_ bins: TimelineBins?, missing: Bool, dryRun: Bool = false) -> String {
        guard let bins else { return section("throughput", "Throughput over time", notRecorded("Throughput over time", dryRun: dryRun)) }
        let perSecond: (TimelineSecond?, (TimelineSecond) -> Int) -> Double? = { bin, value in
            bin.map { rate(value($0), in: $0, width: bins.width) }
        }
        let series = [
            SVGChart.Series(name: "answered", color: ReportPalette.blue, values: bins.bins.map { perSecond($0, \.answered) }),
            SVGChart.Series(name: "delivered", color: ReportPalette.green, dash: "6 3", values: bins.bins.map { perSecond($0, { $0.outcomes[.delivered] }) }),
            SVGChart.Series(name: "retried", color: ReportPalette.orange, dash: "2 2", values: bins.bins.map { perSecond($0, \.retries) }),
            SVGChart.Series(name: "errors", color: ReportPalette.vermillion, dash: "8 2 2 2", values: bins.bins.map { perSecond($0, \.errors) }),
        ]
        var html = chart(id: "chart-throughput", bins: bins, series: series, unit: "per second", marks: marks(bins))
        html += "<p>Marks: G GOAWAY, R stream reset, C connection lost (reconnected), T 429 Too Many Requests, "
            + "K provider token refreshed, ▶ a run started, S the run began stopping, E a run ended. \(binNote(bins))</p>\n"
        if missing { html += "<p class=\"not-recorded\" data-not-recorded=\"partial\">Some logs have no \(TimelineFile.name): their seconds are not in these charts.</p>\n" }
        html += timeTable(bins, columns: ["answered/s", "delivered/s", "retried/s", "errors/s", "429s", "GOAWAYs", "resets"]) { bin, width in
            [bin.answered, bin.outcomes[.delivered], bin.retries, bin.errors].map { HTMLText.fixed(rate($0, in: bin, width: width), 1) }
                + [bin.tooManyRequests, bin.goaways, bin.streamResets].map(HTMLText.count)
        }
        html += eventsTable(bins.events)
        return section("throughput", "Throughput over time", html)
    }

    /// `shape`: the records' latencies (nil: none), along which each bin's buckets are read.
    static func latencyOverTimeSection(_ bins: TimelineBins?, shape: LatencyShape? = nil, dryRun: Bool = false) -> String {
        guard let bins else { return section("latency-over-time", "Latency over time", notRecorded("Latency over time", dryRun: dryRun)) }
        let estimate: (TimelineSecond?, Double) -> Double? = { bin, percentile in
            bin?.latency.estimatedMilliseconds(atPercentile: percentile, shape: shape)
        }
        let series = [
            SVGChart.Series(name: "p50", color: ReportPalette.blue, values: bins.bins.map { estimate($0, 50) }),
            SVGChart.Series(name: "p99", color: ReportPalette.vermillion, dash: "6 3", values: bins.bins.map { estimate($0, 99) }),
        ]
        var html = chart(id: "chart-latency-over-time", bins: bins, series: series, unit: "ms", marks: [])
        html += "<p>Per \(binName(bins)), estimated: the sidecar's coarse log buckets (1, 2.5, 5 per decade) say which "
            + "bucket a percentile falls in, and the records' own latencies in that bucket where in it"
            + (shape.map { ", so an estimate is a latency some row had, never above the largest (\(HTMLText.milliseconds($0.maxMilliseconds)) ms)" } ?? "")
            + ". The exact percentiles of the whole run are in the table above.</p>\n"
        html += timeTable(bins, columns: ["answers", "p50 ms", "p99 ms"]) { bin, _ in
            [HTMLText.count(bin.latency.count),
             estimate(bin, 50).map(HTMLText.milliseconds) ?? "—",
             estimate(bin, 99).map(HTMLText.milliseconds) ?? "—"]
        }
        return section("latency-over-time", "Latency over time", html)
    }

    static func connectionsSection(_ bins: TimelineBins?, dryRun: Bool = false) -> String {
        guard let bins else { return section("connections", "Connections over time", notRecorded("Connections over time", dryRun: dryRun)) }
        var series = [
            SVGChart.Series(name: "open", color: ReportPalette.blue, values: bins.bins.map { $0.map { Double($0.connectionsOpen) } }),
            SVGChart.Series(name: "opened", color: ReportPalette.green, dash: "6 3", values: bins.bins.map { $0.map { Double($0.connectionsOpened) } }),
        ]
        let causes = ConnectionEnd.allCases.filter { end in bins.bins.contains { ($0?.connectionsClosed[end.rawValue] ?? 0) > 0 } }
        for (index, end) in causes.enumerated() {
            series.append(SVGChart.Series(name: "closed: " + end.label, color: [ReportPalette.orange, ReportPalette.vermillion,
                                                                              ReportPalette.purple, ReportPalette.black][index % 4],
                                          dash: "2 2", values: bins.bins.map { $0.map { Double($0.connectionsClosed[end.rawValue]) } }))
        }
        var html = chart(id: "chart-connections", bins: bins, series: series, unit: "connections", marks: [], counts: true)
        html += "<p>Open: at each \(binName(bins))'s end; opened and closed (by cause): in it.</p>\n"
        html += timeTable(bins, columns: ["open", "opened"] + causes.map { "closed: " + $0.label }) { bin, _ in
            [bin.connectionsOpen, bin.connectionsOpened].map(HTMLText.count) + causes.map { HTMLText.count(bin.connectionsClosed[$0.rawValue]) }
        }
        return section("connections", "Connections over time", html)
    }

    /// A line chart over the bins' time axis.
    static func chart(id: String, bins: TimelineBins, series: [SVGChart.Series], unit: String, marks: [SVGChart.Mark],
                      counts: Bool = false, label: ((Double) -> String)? = nil) -> String {
        let xs = bins.bins.indices.map { (Double($0) + 0.5) * bins.width }
        let span = Double(bins.bins.count) * bins.width
        let label = label ?? { HTMLText.offset($0, span: span) }
        let ticks = (0...5).map { step -> (Double, String) in
            let x = span * Double(step) / 5
            return (x, step == 0 ? HTMLText.utc(bins.origin).dropLast(5) + "Z" : label(x))
        }
        return SVGChart.lines(id: id, series: series, xs: xs, xRange: (0, span), xTicks: ticks, yUnit: unit, marks: marks,
                              integers: counts) { index in
            let values = series.map { item -> String in
                "\(item.name) " + (item.values[index].map { HTMLText.fixed($0, $0 < 10 ? 2 : 0) } ?? "not recorded")
            }
            return HTMLText.utc(bins.origin + Double(index) * bins.width) + ": " + values.joined(separator: ", ")
        }
    }

    static func binNote(_ bins: TimelineBins) -> String {
        bins.width == 1 ? "One point per second."
            : bins.width < 1 ? "One point per \(binName(bins)) (the run is short: its first minute is recorded in quarter seconds)."
            : "One point per \(binName(bins)) (the run is long: seconds are added up in bins)."
    }

    /// What one bin covers, in words: "second", "0.25 s", "60 s".
    static func binName(_ bins: TimelineBins) -> String {
        bins.width == 1 ? "second" : bins.width < 1 ? "\(HTMLText.fixed(bins.width, 2)) s" : "\(Int(bins.width)) s"
    }

    /// `count` per second of the time `bin` covers (at least half its width): a run's last, shorter
    /// second is not drawn as a drop, nor a bin a line only partly covers as a peak.
    static func rate(_ count: Int, in bin: TimelineSecond, width: Double) -> Double {
        Double(count) / Swift.min(width, Swift.max(bin.seconds, width / 2))
    }

    private static func marks(_ bins: TimelineBins) -> [SVGChart.Mark] {
        var marks: [SVGChart.Mark] = []
        for (index, bin) in bins.bins.enumerated() {
            guard let bin else { continue }
            let x = (Double(index) + 0.5) * bins.width
            let time = HTMLText.utc(bins.origin + Double(index) * bins.width)
            let lost = bin.connectionsClosed.enumerated().filter { $0.offset != ConnectionEnd.orderly.rawValue }.map(\.element).reduce(0, +)
            for (count, letter, color, what) in [(bin.goaways, "G", ReportPalette.purple, "GOAWAY"), (bin.streamResets, "R", ReportPalette.vermillion, "stream resets"),
                                                 (lost, "C", ReportPalette.black, "connections lost"), (bin.tooManyRequests, "T", ReportPalette.orange, "429 answers"),
                                                 (bin.tokenRefreshes, "K", ReportPalette.blue, "provider token refreshes")] where count > 0 {
                marks.append(SVGChart.Mark(x: x, letter: letter, color: color, title: "\(time): \(count) \(what)"))
            }
        }
        for event in bins.events {
            let letter = event.kind == "start" ? "▶" : event.kind == "stop" ? "S" : "E"
            marks.append(SVGChart.Mark(x: event.time - bins.origin, letter: letter, color: ReportPalette.black,
                                       title: "\(HTMLText.utc(event.time)): \(event.kind) \(event.detail)", across: true))
        }
        return marks
    }

    /// The numbers behind a time chart, in at most `tableRows` rows (bins added up further).
    static func timeTable(_ bins: TimelineBins, columns: [String], cells: (TimelineSecond, Double) -> [String]) -> String {
        let group = Swift.max(1, (bins.bins.count + tableRows - 1) / tableRows)
        var rows = ["<tr><th>From (UTC)</th>" + columns.map { "<th class=\"n\">\(HTMLText.escape($0))</th>" }.joined() + "</tr>"]
        for start in stride(from: 0, to: bins.bins.count, by: group) {
            let members = bins.bins[start..<Swift.min(start + group, bins.bins.count)].compactMap { $0 }
            guard var sum = members.first else { continue }
            for member in members.dropFirst() {
                sum.addCounters(member)
                sum.seconds += member.seconds
            }
            if let last = members.last { (sum.connectionsOpen, sum.inFlight) = (last.connectionsOpen, last.inFlight) }
            rows.append("<tr><td>\(HTMLText.utc(bins.origin + Double(start) * bins.width))</td>"
                        + cells(sum, Double(group) * bins.width).map { "<td class=\"n\">\($0)</td>" }.joined() + "</tr>")
        }
        return "<details><summary>The numbers (\(rows.count - 1) rows)</summary>" + table(rows) + "</details>\n"
    }

    private static func eventsTable(_ events: [TimelineEvent]) -> String {
        guard !events.isEmpty else { return "" }
        let rows = events.prefix(200).map { event in
            "<tr data-event=\"\(HTMLText.escape(event.kind))\"><td>\(HTMLText.utc(event.time))</td><td>\(HTMLText.escape(event.kind))</td>"
                + "<td>\(HTMLText.escape(event.detail))</td></tr>"
        }
        return "<h3>Events</h3>" + table(["<tr><th>When (UTC)</th><th>Event</th><th>Detail</th></tr>"] + rows)
    }
}
