/// UTC timestamps without Foundation's formatters (civil-from-days, H. Hinnant's algorithm).
package enum ISO8601 {
    /// `2026-11-23T09:31:39.123Z`
    package static func format(milliseconds: Int64) -> String {
        let millis = Int((milliseconds % 1000 + 1000) % 1000)
        let seconds = (milliseconds - Int64(millis)) / 1000
        var days = Int(seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400)
        let secondOfDay = Int(seconds - Int64(days) * 86400)
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
