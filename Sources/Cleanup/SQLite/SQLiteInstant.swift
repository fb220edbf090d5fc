#if canImport(Glibc)
import Glibc
#endif

/// A registered-at value of a SQLite table read as an instant, to the millisecond. SQLite has no
/// time type: apps store ISO 8601 text (`2025-12-22T16:46:28.279Z`, or `2025-12-22 16:46:28.279000`
/// as Django and Rails write it) or Unix seconds. Anything else is not an instant (nil): such a row
/// is kept and counted apart, never compared as a string.
enum SQLiteInstant {
    static func milliseconds(seconds: Int64) -> Int64? {
        let (value, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? nil : value
    }

    static func milliseconds(seconds: Double) -> Int64? {
        let value = (seconds * 1000).rounded()
        return value.isFinite && abs(value) < 9e15 ? Int64(value) : nil
    }

    /// `YYYY-MM-DD[(T| )HH:MM[:SS[.fraction]]][Z|±HH:MM|±HHMM|±HH]` (no zone: UTC; the fraction cut
    /// to the millisecond), or a number of Unix seconds written as text.
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        if let seconds = Int64(text) { return milliseconds(seconds: seconds) }
        if bytes.first.map({ (0x30...0x39).contains($0) || $0 == 0x2D }) == true, bytes.contains(0x2E), !bytes.contains(0x3A),
           let seconds = Double(text) {
            return milliseconds(seconds: seconds)
        }
        var reader = Reader(bytes: bytes)
        guard let year = reader.digits(4), reader.take(0x2D), let month = reader.digits(2), reader.take(0x2D),
              let day = reader.digits(2) else { return nil }
        var hour = 0, minute = 0, second = 0, millis = 0, offsetMinutes = 0
        if reader.take(UInt8(ascii: "T")) || reader.take(UInt8(ascii: "t")) || reader.take(0x20) {
            guard let h = reader.digits(2), reader.take(0x3A), let m = reader.digits(2) else { return nil }
            (hour, minute) = (h, m)
            if reader.take(0x3A) {
                guard let s = reader.digits(2) else { return nil }
                second = s
                if reader.take(0x2E) {
                    var count = 0
                    while let digit = reader.digit() {
                        if count < 3 { millis = millis * 10 + digit }
                        count += 1
                    }
                    guard count > 0 else { return nil }
                    for _ in count..<max(count, 3) { millis *= 10 }
                }
            }
            if !(reader.take(UInt8(ascii: "Z")) || reader.take(UInt8(ascii: "z"))), let sign = reader.sign() {
                guard let h = reader.digits(2), h < 24 else { return nil }
                var m = 0
                if reader.take(0x3A) {
                    guard let minutes = reader.digits(2) else { return nil }
                    m = minutes
                } else if let minutes = reader.digits(2) {
                    m = minutes
                }
                guard m < 60 else { return nil }
                offsetMinutes = sign * (h * 60 + m)
            }
        }
        guard reader.atEnd, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalizes 31 February into March: a date that moved was not a date.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return (Int64(seconds) - Int64(offsetMinutes) * 60) * 1000 + Int64(millis)
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
            index += 1
            return Int(bytes[index - 1] - 0x30)
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let next = digit() else { return nil }
                value = value * 10 + next
            }
            return value
        }

        mutating func sign() -> Int? {
            if take(0x2B) { return 1 }
            if take(0x2D) { return -1 }
            return nil
        }
    }
}
