import Foundation
import Pipeline

/// The latency percentile distribution, HdrHistogram style: the percentile axis is logarithmic in
/// 1/(1 − p), so 90 %, 99 %, 99.9 % and 99.99 % are equally far apart and the tail is visible;
/// overall and per endpoint, from the records' latencies (exact to 3 significant digits).
extension ReportPage {
    /// The percentiles the table shows, and their labels.
    static let percentilePoints: [(Double, String)] = [(50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p99.9"), (99.99, "p99.99")]

    static func latencySection(_ summary: Summary) -> String {
        guard summary.latency.count > 0 else {
            return section("latency", "Latency", "<p>No answer from APNs was recorded, so there is no latency to show.</p>\n")
        }
        var curves: [(name: String, histogram: LatencyHistogram)] = [("all endpoints", summary.latency)]
        let detail = summary.detail
        if detail.endpoints.count > 1 {
            curves += zip(detail.endpoints, detail.endpointLatency).map { ($0, $1) }
        } else if let endpoint = detail.endpoints.first {
            curves[0].name = endpoint
        }
        return section("latency", "Latency percentile distribution", percentileChart(id: "chart-latency", curves: curves))
    }

    /// The chart and its table for some histograms.
    static func percentileChart(id: String, curves: [(name: String, histogram: LatencyHistogram)]) -> String {
        let xs = stride(from: 0.0, through: 4.0, by: 0.05).map { $0 }
        let dashes = ["", "6 3", "2 2", "8 2 2 2", "4 4"]
        let series = curves.enumerated().map { index, curve in
            SVGChart.Series(name: curve.name, color: ReportPalette.cycle[index % ReportPalette.cycle.count],
                            dash: dashes[index % dashes.count],
                            values: curve.histogram.count > 0 ? curve.histogram.milliseconds(atPercentiles: xs.map(percentile(atX:)))
                                : xs.map { _ in nil })
        }
        let ticks = [(0.0, "0%"), (log10(2.0), "50%"), (1.0, "90%"), (2.0, "99%"), (3.0, "99.9%"), (4.0, "99.99%")]
        var html = SVGChart.lines(id: id, series: series, xs: xs, xRange: (0, 4), xTicks: ticks, yUnit: "ms") { index in
            "p" + HTMLText.fixed(percentile(atX: xs[index]), 3) + ": "
                + series.map { "\($0.name) " + ($0.values[index].map(HTMLText.milliseconds) ?? "—") + " ms" }.joined(separator: ", ")
        }
        html += "<p>Percentile axis in 1/(1 − p): each step right is ten times rarer.</p>\n"
        var rows = ["<tr><th>Series</th><th class=\"n\">Answers</th>" + percentilePoints.map { "<th class=\"n\">\($0.1) ms</th>" }.joined()
                    + "<th class=\"n\">max ms</th></tr>"]
        for curve in curves {
            let histogram = curve.histogram
            let points = histogram.milliseconds(atPercentiles: percentilePoints.map(\.0))
            rows.append("<tr data-latency-series=\"\(HTMLText.escape(curve.name))\" data-count=\"\(histogram.count)\"><td><code>\(HTMLText.escape(curve.name))</code></td>"
                        + "<td class=\"n\">\(HTMLText.count(histogram.count))</td>"
                        + points.map { "<td class=\"n\">\(HTMLText.milliseconds($0))</td>" }.joined()
                        + "<td class=\"n\">\(HTMLText.milliseconds(histogram.maxMilliseconds))</td></tr>")
        }
        return html + table(rows)
    }

    /// The percentile at a point of the log axis: x = log10(1 / (1 − p/100)).
    static func percentile(atX x: Double) -> Double { 100 * (1 - pow(10, -x)) }
}
