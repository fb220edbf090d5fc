import Foundation
import Pipeline

/// Inline SVG charts for the report: lines over an x axis (gaps where a value is nil), bars, and
/// marks along the x axis. Each series has a colour and a dash pattern, so lines are told apart
/// without colour too; every point carries a `<title>` (the browser shows it on hover, no script).
struct SVGChart {
    struct Series {
        var name: String
        var color: String
        var dash: String = ""
        /// One value per x position; nil leaves a gap.
        var values: [Double?]
    }

    /// A mark on the x axis (a GOAWAY, a stop, ...): its x position, a letter, and a tooltip.
    struct Mark {
        var x: Double
        var letter: String
        var color: String
        var title: String
        /// A line across the plot (a run's start, stop, end); otherwise a tick under it, so that
        /// frequent marks (a 429 every minute) leave the lines readable.
        var across = false
    }

    static let width = 900.0, height = 260.0
    static let left = 64.0, right = 16.0, top = 12.0, bottom = 46.0

    /// A line chart. `xs`: each position's x value (ascending), drawn over `xRange`, with labels at
    /// `xTicks`; `integers`: the values are counts, so the y axis is labelled in whole numbers.
    static func lines(id: String, series: [Series], xs: [Double], xRange: (Double, Double), xTicks: [(Double, String)],
                      yUnit: String, marks: [Mark] = [], integers: Bool = false, pointTitle: (Int) -> String) -> String {
        let xMin = xRange.0, xMax = Swift.max(xRange.1, xMin + 1e-9)
        let yMax = niceMax(series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0, integers: integers)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func px(_ x: Double) -> Double { left + (x - xMin) / (xMax - xMin) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - y / yMax * plotHeight }
        var svg = open(id: id)
        svg += axes(yMax: yMax, yUnit: yUnit, xTicks: xTicks.map { (px($0.0), $0.1) }, integers: integers)
        for item in series {
            var segments: [[String]] = [[]]
            for (index, value) in item.values.enumerated() {
                guard let value, index < xs.count else { if !segments[segments.count - 1].isEmpty { segments.append([]) }; continue }
                segments[segments.count - 1].append(number(px(xs[index])) + "," + number(py(value)))
            }
            let dash = item.dash.isEmpty ? "" : " stroke-dasharray=\"\(item.dash)\""
            for segment in segments where !segment.isEmpty {
                if segment.count == 1 {
                    let parts = segment[0].split(separator: ",")
                    svg += "<circle cx=\"\(parts[0])\" cy=\"\(parts[1])\" r=\"2.5\" fill=\"\(item.color)\"/>"
                } else {
                    svg += "<polyline class=\"series\" fill=\"none\" stroke=\"\(item.color)\" stroke-width=\"1.8\"\(dash) points=\""
                        + segment.joined(separator: " ") + "\"/>"
                }
            }
        }
        // Invisible columns carry each position's values as a tooltip.
        if xs.count > 1 {
            let step = plotWidth * (xs[1] - xs[0]) / (xMax - xMin)
            svg += "<g class=\"hover\" fill=\"transparent\">"
            for index in xs.indices {
                svg += "<rect x=\"\(number(px(xs[index]) - step / 2))\" y=\"\(number(top))\" width=\"\(number(step))\" "
                    + "height=\"\(number(plotHeight))\"><title>\(HTMLText.escape(pointTitle(index)))</title></rect>"
            }
            svg += "</g>"
        }
        // A letter only where the last of its kind is 14 px away: dense marks become a row of ticks.
        var lastLetterX: [String: Double] = [:]
        for mark in marks {
            let position = px(mark.x), x = number(position)
            let (y1, y2) = mark.across ? (top, top + plotHeight) : (top + plotHeight + 22, top + plotHeight + 28)
            svg += "<g class=\"mark\"><title>\(HTMLText.escape(mark.title))</title>"
                + "<line x1=\"\(x)\" x2=\"\(x)\" y1=\"\(number(y1))\" y2=\"\(number(y2))\" stroke=\"\(mark.color)\" stroke-width=\"1\""
                + (mark.across ? " stroke-dasharray=\"2 3\"" : "") + "/>"
            if position - (lastLetterX[mark.letter] ?? -.infinity) >= 14 {
                lastLetterX[mark.letter] = position
                svg += "<text x=\"\(x)\" y=\"\(number(top + plotHeight + 38))\" text-anchor=\"middle\" fill=\"\(mark.color)\" font-size=\"10\">\(HTMLText.escape(mark.letter))</text>"
            }
            svg += "</g>"
        }
        return svg + "</svg>" + legend(series)
    }

    /// Vertical bars, one per label.
    static func bars(id: String, labels: [String], values: [Int], colors: [String], yUnit: String) -> String {
        let yMax = niceMax(Double(values.max() ?? 0), integers: true)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let step = plotWidth / Double(Swift.max(1, labels.count))
        var svg = open(id: id)
        let ticks = labels.indices.map { (left + step * (Double($0) + 0.5), labels[$0]) }
        svg += axes(yMax: yMax, yUnit: yUnit, xTicks: ticks, edges: false, integers: true)
        for (index, value) in values.enumerated() {
            let barHeight = Double(value) / yMax * plotHeight
            svg += "<rect class=\"bar\" x=\"\(number(left + step * Double(index) + step * 0.15))\" y=\"\(number(top + plotHeight - barHeight))\" "
                + "width=\"\(number(step * 0.7))\" height=\"\(number(barHeight))\" fill=\"\(colors[index % colors.count])\" stroke=\"#333\" stroke-width=\"0.5\">"
                + "<title>\(HTMLText.escape(labels[index])): \(HTMLText.count(value))</title></rect>"
        }
        return svg + "</svg>"
    }

    /// One horizontal bar split in proportion to `parts`.
    static func stacked(id: String, parts: [(name: String, value: Int, color: String)]) -> String {
        let total = Double(Swift.max(1, parts.map(\.value).reduce(0, +)))
        var svg = "<svg id=\"\(id)\" class=\"chart\" role=\"img\" viewBox=\"0 0 \(Int(width)) 40\" xmlns=\"http://www.w3.org/2000/svg\">"
        var x = 0.0
        for part in parts where part.value > 0 {
            let w = Double(part.value) / total * width
            svg += "<rect class=\"bar\" x=\"\(number(x))\" y=\"4\" width=\"\(number(w))\" height=\"32\" fill=\"\(part.color)\" stroke=\"#fff\" stroke-width=\"1\">"
                + "<title>\(HTMLText.escape(part.name)): \(HTMLText.count(part.value))</title></rect>"
            x += w
        }
        return svg + "</svg>"
    }

    private static func open(id: String) -> String {
        "<svg id=\"\(id)\" class=\"chart\" role=\"img\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" xmlns=\"http://www.w3.org/2000/svg\">"
    }

    /// `edges`: the first and last tick labels hang inward from the plot's ends (a time or
    /// percentile axis), instead of centring under their position (bars).
    private static func axes(yMax: Double, yUnit: String, xTicks: [(Double, String)], edges: Bool = true,
                             integers: Bool = false) -> String {
        let plotHeight = height - top - bottom
        var svg = "<g class=\"axes\" font-size=\"11\" fill=\"#333\">"
        for step in 0...4 {
            let value = yMax * Double(step) / 4
            let y = number(top + plotHeight - Double(step) / 4 * plotHeight)
            svg += "<line x1=\"\(number(left))\" x2=\"\(number(width - right))\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#ddd\"/>"
                + "<text x=\"\(number(left - 6))\" y=\"\(y)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(tickText(value, integers: integers))</text>"
        }
        for (index, (x, label)) in xTicks.enumerated() {
            let anchor = !edges ? "middle" : index == 0 ? "start" : index == xTicks.count - 1 ? "end" : "middle"
            svg += "<text x=\"\(number(x))\" y=\"\(number(top + plotHeight + 16))\" text-anchor=\"\(anchor)\">\(HTMLText.escape(label))</text>"
        }
        svg += "<text x=\"12\" y=\"\(number(top + plotHeight / 2))\" transform=\"rotate(-90 12 \(number(top + plotHeight / 2)))\" text-anchor=\"middle\">\(HTMLText.escape(yUnit))</text>"
        return svg + "</g>"
    }

    private static func legend(_ series: [Series]) -> String {
        "<p class=\"legend\">" + series.map { item in
            "<span><svg width=\"28\" height=\"10\"><line x1=\"0\" x2=\"28\" y1=\"5\" y2=\"5\" stroke=\"\(item.color)\" stroke-width=\"2.5\""
                + (item.dash.isEmpty ? "" : " stroke-dasharray=\"\(item.dash)\"") + "/></svg> \(HTMLText.escape(item.name))</span>"
        }.joined(separator: " ") + "</p>"
    }

    /// A round axis maximum at or above `value`; for `integers` (counts) a multiple of 4, at
    /// least 4, so that each of the axis' four steps is a whole number.
    static func niceMax(_ value: Double, integers: Bool = false) -> Double {
        guard value > 0 else { return integers ? 4 : 1 }
        let magnitude = Foundation.pow(10, (Foundation.log10(value)).rounded(.down))
        var nice = 10 * magnitude
        for factor in [1.0, 2, 2.5, 4, 5, 8, 10] where factor * magnitude >= value {
            nice = factor * magnitude
            break
        }
        return integers ? Swift.max(4, (nice / 4).rounded(.up) * 4) : nice
    }

    private static func tickText(_ value: Double, integers: Bool) -> String {
        if value >= 1_000_000 { return HTMLText.fixed(value / 1_000_000, value.truncatingRemainder(dividingBy: 1_000_000) == 0 ? 0 : 1) + "M" }
        if value >= 10_000 { return HTMLText.fixed(value / 1000, 0) + "k" }
        if value >= 10 || value == 0 || integers { return HTMLText.fixed(value, 0) }
        return HTMLText.fixed(value, 2)
    }

    static func number(_ value: Double) -> String { HTMLText.fixed(value, 1) }
}
