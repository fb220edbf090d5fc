import Pipeline

/// `report --html F --compare A B`: two runs on the same axes — the before/after a launch review
/// asks for. Time charts put both runs' seconds since their own start on one axis, in bins of one
/// width; the table gives B's change against A for the rate and each latency percentile.
extension ReportPage {
    public static func render(compare a: ReportCampaign, _ b: ReportCampaign, names: (String, String)) -> String {
        var body = section("compare", "The two runs", compareTable(a, b, names: names))
        let spans = [a, b].map { campaign in campaign.span.map { $0.end - $0.start } }
        if let spanA = spans[0], let spanB = spans[1], let startA = a.span?.start, let startB = b.span?.start {
            let span = Swift.max(spanA, spanB)
            // One width for both, no finer than either's sidecar; each bin holds that much of each run.
            let resolution = Swift.max(TimelineBins.resolution(a.timelines), TimelineBins.resolution(b.timelines))
            let width = TimelineBins.width(span: span, maxBins: 600, resolution: resolution)
            let binsA = TimelineBins(sources: a.timelines, origin: startA, span: span, width: width)
            let binsB = TimelineBins(sources: b.timelines, origin: startB, span: span, width: width)
            let per: (TimelineBins, (TimelineSecond) -> Double?) -> [Double?] = { bins, value in bins.bins.map { $0.flatMap(value) } }
            let rate: (TimelineSecond) -> Double? = { Self.rate($0.answered, in: $0, width: width) }
            let throughput = [SVGChart.Series(name: "A answered/s", color: ReportPalette.blue, values: per(binsA, rate)),
                              SVGChart.Series(name: "B answered/s", color: ReportPalette.vermillion, dash: "6 3", values: per(binsB, rate))]
            body += section("throughput", "Throughput over time (seconds since each run's start)",
                            relativeChart(id: "chart-compare-throughput", bins: binsA, series: throughput, unit: "per second"))
            // Each run's estimates read along its own records' latencies.
            let (shapeA, shapeB) = (LatencyShape(run: a), LatencyShape(run: b))
            let estimate = { (shape: LatencyShape?, percentile: Double) -> (TimelineSecond) -> Double? in
                { $0.latency.estimatedMilliseconds(atPercentile: percentile, shape: shape) }
            }
            let latency = [SVGChart.Series(name: "A p50", color: ReportPalette.blue, values: per(binsA, estimate(shapeA, 50))),
                           SVGChart.Series(name: "A p99", color: ReportPalette.skyBlue, dash: "2 2", values: per(binsA, estimate(shapeA, 99))),
                           SVGChart.Series(name: "B p50", color: ReportPalette.vermillion, dash: "6 3", values: per(binsB, estimate(shapeB, 50))),
                           SVGChart.Series(name: "B p99", color: ReportPalette.orange, dash: "8 2 2 2", values: per(binsB, estimate(shapeB, 99)))]
            body += section("latency-over-time", "Latency over time (seconds since each run's start)",
                            relativeChart(id: "chart-compare-latency-over-time", bins: binsA, series: latency, unit: "ms"))
        } else {
            body += section("throughput", "Throughput over time", notRecorded("Throughput over time of " + (spans[0] == nil ? "A" : "B")))
        }
        var curves: [(name: String, histogram: LatencyHistogram)] = []
        if a.summary.latency.count > 0 { curves.append(("A", a.summary.latency)) }
        if b.summary.latency.count > 0 { curves.append(("B", b.summary.latency)) }
        body += section("latency", "Latency percentile distribution",
                        curves.isEmpty ? "<p>Neither run recorded an answer.</p>" : percentileChart(id: "chart-latency", curves: curves))
        return document(title: "apns-bulk comparison: \(baseName(names.0)) vs \(baseName(names.1))", body: body)
    }

    private static func relativeChart(id: String, bins: TimelineBins, series: [SVGChart.Series], unit: String) -> String {
        let xs = bins.bins.indices.map { (Double($0) + 0.5) * bins.width }
        let span = Double(bins.bins.count) * bins.width
        let ticks = (0...5).map { (span * Double($0) / 5, HTMLText.offset(span * Double($0) / 5, span: span)) }
        let svg = SVGChart.lines(id: id, series: series, xs: xs, xRange: (0, span), xTicks: ticks, yUnit: unit) { index in
            HTMLText.offset(Double(index) * bins.width, span: span) + ": "
                + series.map { "\($0.name) " + ($0.values[index].map { HTMLText.fixed($0, 1) } ?? "—") }.joined(separator: ", ")
        }
        return svg + compareTimeTable(bins: bins, series: series)
    }

    private static func compareTimeTable(bins: TimelineBins, series: [SVGChart.Series]) -> String {
        let group = Swift.max(1, (bins.bins.count + tableRows - 1) / tableRows)
        var rows = ["<tr><th>Since start</th>" + series.map { "<th class=\"n\">\(HTMLText.escape($0.name))</th>" }.joined() + "</tr>"]
        for start in stride(from: 0, to: bins.bins.count, by: group) {
            let cells = series.map { item -> String in
                let values = item.values[start..<Swift.min(start + group, item.values.count)].compactMap { $0 }
                return values.isEmpty ? "—" : HTMLText.fixed(values.reduce(0, +) / Double(values.count), 1)
            }
            rows.append("<tr><td>\(HTMLText.offset(Double(start) * bins.width, span: Double(bins.bins.count) * bins.width))</td>" + cells.map { "<td class=\"n\">\($0)</td>" }.joined() + "</tr>")
        }
        return "<details><summary>The numbers (\(rows.count - 1) rows)</summary>" + table(rows) + "</details>\n"
    }

    private static func compareTable(_ a: ReportCampaign, _ b: ReportCampaign, names: (String, String)) -> String {
        var rows = ["<tr><th></th><th>A</th><th>B</th><th class=\"n\">B against A</th></tr>",
                    "<tr><th>Result log</th><td><code>\(HTMLText.escape(names.0))</code></td><td><code>\(HTMLText.escape(names.1))</code></td><td></td></tr>"]
        func text(_ header: ReportHeader, _ value: (ReportHeader) -> String?) -> String { value(header).map(HTMLText.escape) ?? "—" }
        rows.append("<tr><th>Input</th><td>\(text(a.header) { $0.input })</td><td>\(text(b.header) { $0.input })</td><td></td></tr>")
        rows.append("<tr><th>Started (UTC)</th><td>\(text(a.header) { $0.startedAt })</td><td>\(text(b.header) { $0.startedAt })</td><td></td></tr>")
        rows.append("<tr><th>Exit status</th><td>\(text(a.header) { $0.exitStatus.map(String.init) })</td><td>\(text(b.header) { $0.exitStatus.map(String.init) })</td><td></td></tr>")
        func metric(_ key: String, _ label: String, _ valueA: Double?, _ valueB: Double?, _ format: (Double) -> String) {
            let delta = valueA.flatMap { va in valueB.map { HTMLText.delta($0, va) } } ?? "—"
            rows.append("<tr data-metric=\"\(key)\" data-a=\"\(valueA.map { HTMLText.fixed($0, 3) } ?? "")\" data-b=\"\(valueB.map { HTMLText.fixed($0, 3) } ?? "")\">"
                        + "<th>\(label)</th><td class=\"n\">\(valueA.map(format) ?? "—")</td><td class=\"n\">\(valueB.map(format) ?? "—")</td>"
                        + "<td class=\"n\">\(delta)</td></tr>")
        }
        metric("rows", "Rows", Double(a.summary.counts.total), Double(b.summary.counts.total)) { HTMLText.count(Int($0)) }
        for outcome in Outcome.allCases where a.summary.counts[outcome] + b.summary.counts[outcome] > 0 {
            metric(outcome.rawValue, outcome.rawValue, Double(a.summary.counts[outcome]), Double(b.summary.counts[outcome])) { HTMLText.count(Int($0)) }
        }
        metric("rate", "Notifications/s answered", a.answeredPerSecond, b.answeredPerSecond) { HTMLText.count(Int($0.rounded())) }
        let points = percentilePoints + [(100, "max")]
        for (percentile, label) in points {
            let value: (ReportCampaign) -> Double? = { campaign in
                campaign.summary.latency.count == 0 ? nil
                    : percentile == 100 ? campaign.summary.latency.maxMilliseconds : campaign.summary.latency.milliseconds(atPercentile: percentile)
            }
            metric("latency-" + label, "Latency \(label) (ms)", value(a), value(b), HTMLText.milliseconds)
        }
        return table(rows)
    }
}
