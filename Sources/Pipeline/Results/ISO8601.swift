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

extension ISO8601 {
    /// Unix milliseconds of a UTC timestamp as `format` writes it (`2026-11-23T09:31:39.123Z`),
    /// its fraction of any length (cut to the millisecond) or absent; nil for any other text.
    package static func milliseconds(_ text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        let separators: [(Int, UInt8)] = [(4, 0x2D), (7, 0x2D), (10, UInt8(ascii: "T")), (13, 0x3A), (16, 0x3A)]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1 }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var millis = 0
        let fractionEnd = bytes.count - 1
        if fractionEnd > 19 {
            let kept = min(fractionEnd, 23)
            guard bytes[19] == UInt8(ascii: "."), fractionEnd > 20,
                  bytes[20..<fractionEnd].allSatisfy({ (0x30...0x39).contains($0) }), let leading = number(20..<kept)
            else { return nil }
            millis = leading * [100, 10, 1][kept - 21]
        }
        let seconds = Int64(daysFromCivil(year: year, month: month, day: day)) * 86400
            + Int64(hour * 3600 + minute * 60 + second)
        return seconds * 1000 + Int64(millis)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days-from-civil).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
