/// `--spread`'s durations: `90s`, `30m`, `2h`, `1h30m`, `1.5h`; units h, m and s, largest first.
/// Zero (`0s`, `0m`) is a duration too: no spread.
public enum PacerDuration {
    /// Seconds, or nil when `text` is not such a duration (a bare number has no unit: nil, so that
    /// `--spread 30` is not read as 30 seconds by one operator and 30 minutes by another).
    public static func seconds(parsing text: String) -> Double? {
        var total = 0.0
        var number = ""
        var lastUnit = 4
        for character in text {
            if character.isASCII, character.isNumber || character == "." {
                number.append(character)
                continue
            }
            let unit: Int, scale: Double
            switch character {
            case "h": (unit, scale) = (3, 3600)
            case "m": (unit, scale) = (2, 60)
            case "s": (unit, scale) = (1, 1)
            default: return nil
            }
            guard unit < lastUnit, let value = Double(number), value.isFinite else { return nil }
            total += value * scale
            lastUnit = unit
            number = ""
        }
        guard number.isEmpty, lastUnit < 4, total >= 0, total.isFinite else { return nil }
        return total
    }

    /// The rate that sends `rows` rows in `seconds`: the first requests go at once (the pacer's
    /// burst) and the rest at this pace, so the run ends a little before `seconds`. Nil for no row.
    public static func rate(rows: Int, seconds: Double) -> Double? {
        guard rows > 0, seconds > 0 else { return nil }
        return Double(rows) / seconds
    }

    /// A rate for the progress line and the summary: whole numbers from 100/s, else up to two decimals.
    public static func text(rate: Double) -> String {
        if rate >= 100 { return String(Int(rate.rounded())) }
        let hundredths = Int((rate * 100).rounded())
        var text = String(hundredths / 100)
        let fraction = hundredths % 100
        if fraction != 0 { text += "." + (fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0" : "") + String(fraction)) }
        return text
    }
}
