import Pipeline

/// Text for the HTML report: every value that came from input (file names, topics, reasons,
/// endpoints) goes through `escape`, so a campaign file named `<img src=x onerror=alert(1)>.csv`
/// shows as that text; numbers are formatted the way a reader compares them.
enum HTMLText {
    /// `value` safe inside element text and inside a quoted attribute.
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// An integer with thousands separators: 1,234,567.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// A decimal with `places` places.
    static func fixed(_ value: Double, _ places: Int) -> String { Summary.fixed(value, places) }

    /// A share of a whole as a percentage with two places ("—" of nothing).
    static func share(_ part: Int, of whole: Int) -> String {
        whole > 0 ? fixed(Double(part) * 100 / Double(whole), 2) + " %" : "—"
    }

    /// A latency in ms, with precision that suits its size.
    static func milliseconds(_ value: Double) -> String {
        value >= 100 ? fixed(value, 0) : value >= 10 ? fixed(value, 1) : fixed(value, 2)
    }

    /// A signed relative change, "+4.20 %".
    static func delta(_ new: Double, _ old: Double) -> String {
        guard old != 0 else { return "—" }
        let change = (new - old) / old * 100
        return (change >= 0 ? "+" : "") + fixed(change, 2) + " %"
    }

    /// A span of seconds as H:MM:SS.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes):" + (rest < 10 ? "0" : "") + "\(rest)"
    }

    /// A time-axis label: "+1.5 s" on a short axis, "+0:12:30" on a long one.
    static func offset(_ seconds: Double, span: Double) -> String {
        span < 120 ? "+" + fixed(seconds, span < 10 ? 1 : 0) + " s" : "+" + duration(seconds)
    }

    /// Unix seconds as UTC ISO 8601.
    static func utc(_ unixSeconds: Double) -> String {
        ISO8601.format(milliseconds: Int64((unixSeconds * 1000).rounded(.down)))
    }
}

/// The Okabe–Ito palette: eight colours told apart with every common colour-vision deficiency.
enum ReportPalette {
    static let black = "#000000", orange = "#E69F00", skyBlue = "#56B4E9", green = "#009E73"
    static let yellow = "#F0E442", blue = "#0072B2", vermillion = "#D55E00", purple = "#CC79A7"
    /// In order, for series with no colour of their own.
    static let cycle = [blue, orange, green, vermillion, purple, skyBlue, black, yellow]

    static func color(of outcome: Outcome) -> String {
        switch outcome {
        case .delivered: green
        case .unregistered: orange
        case .badToken: vermillion
        case .failed: purple
        case .rejected: yellow
        case .gaveUp: skyBlue
        case .aborted: black
        }
    }
}
