/// A small JSON parser for the flat objects ResultRecord writes: any key order, unknown keys skipped.
struct ResultRecordParser {
    struct Failure: Error { let detail: String }

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    static func parse(_ line: ArraySlice<UInt8>) throws(Failure) -> ResultRecord {
        var parser = ResultRecordParser(bytes: line, index: line.startIndex)
        return try parser.record()
    }

    private mutating func record() throws(Failure) -> ResultRecord {
        var record = ResultRecord(row: 0, deviceToken: "", outcome: .aborted)
        var seen: UInt8 = 0
        try expect(UInt8(ascii: "{"))
        skipSpaces()
        if peek() == UInt8(ascii: "}") { throw Failure(detail: "empty object") }
        while true {
            skipSpaces()
            let key = try string()
            skipSpaces()
            try expect(UInt8(ascii: ":"))
            skipSpaces()
            seen |= try assign(key, to: &record)
            skipSpaces()
            if peek() == UInt8(ascii: ",") { index += 1; continue }
            try expect(UInt8(ascii: "}"))
            break
        }
        for (bit, required) in [(1, "row"), (2, "device_token or channel_id"), (4, "outcome")] where seen & UInt8(bit) == 0 {
            throw Failure(detail: "no \(required)")
        }
        return record
    }

    /// Returns the bit of a required key it filled (row 1, device_token 2, outcome 4), else 0.
    private mutating func assign(_ key: String, to record: inout ResultRecord) throws(Failure) -> UInt8 {
        switch key {
        case "row": record.row = Int(try integer()); return 1
        case "device_token": record.deviceToken = try string(); return 2
        case "channel_id":
            record.deviceToken = try string()
            record.kind = .broadcast
            return 2
        case "outcome":
            let name = try string()
            guard let outcome = Outcome(rawValue: name) else { throw Failure(detail: "unknown outcome \(name)") }
            record.outcome = outcome
            return 4
        case "status": record.status = Int(try integer())
        case "reason": record.reason = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "apns_id", "apns_request_id":
            record.apnsID = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "attempts": record.attempts = Int(try integer())
        case "unregistered_at": record.unregisteredAt = try optional { (p: inout Self) throws(Failure) in try p.integer() }
        case "latency_ms": record.latencyMs = try optional { (p: inout Self) throws(Failure) in try p.number() }
        case "endpoint": record.endpoint = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "retried_after_connection_loss": record.retriedAfterConnectionLoss = try boolean()
        case "duplicate_of": record.duplicateOf = Int(try integer())
        case "apns_unique_id": record.apnsUniqueID = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "environment": record.environment = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "key_id": record.keyID = try optional { (p: inout Self) throws(Failure) in try p.string() }
        case "environment_fallback_from":
            record.environmentFallbackFrom = try optional { (p: inout Self) throws(Failure) in try p.string() }
        default: try skipValue()
        }
        return 0
    }

    private mutating func optional<T>(_ parse: (inout Self) throws(Failure) -> T) throws(Failure) -> T? {
        if literal("null") { return nil }
        return try parse(&self)
    }

    private func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    private mutating func skipSpaces() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw Failure(detail: "expected '\(Character(Unicode.Scalar(byte)))' at column \(index - bytes.startIndex + 1)") }
        index += 1
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.endIndex - index >= count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if matches { index += count }
        return matches
    }

    private mutating func boolean() throws(Failure) -> Bool {
        if literal("true") { return true }
        if literal("false") { return false }
        throw Failure(detail: "expected true or false")
    }

    private mutating func integer() throws(Failure) -> Int64 {
        // Fast path for the plain digits this log writes.
        var cursor = index
        var negative = false
        if cursor < bytes.endIndex && bytes[cursor] == 0x2D { negative = true; cursor += 1 }
        var value: Int64 = 0
        let digitsStart = cursor
        while cursor < bytes.endIndex, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39, cursor - digitsStart < 18 {
            value = value * 10 + Int64(bytes[cursor] - 0x30)
            cursor += 1
        }
        let next = cursor < bytes.endIndex ? bytes[cursor] : 0
        if cursor > digitsStart && !(next >= 0x30 && next <= 0x39) && next != 0x2E && next != 0x65 && next != 0x45 {
            index = cursor
            return negative ? -value : value
        }
        return try generalInteger()
    }

    private mutating func generalInteger() throws(Failure) -> Int64 {
        let value = try number()
        guard value == value.rounded(), abs(value) < 9e15 else { throw Failure(detail: "expected an integer") }
        return Int64(value)
    }

    private mutating func number() throws(Failure) -> Double {
        let start = index
        while let byte = peek(), (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E || byte == 0x65 || byte == 0x45 {
            index += 1
        }
        guard index > start, let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw Failure(detail: "expected a number at column \(start - bytes.startIndex + 1)")
        }
        return value
    }

    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        var cursor = index
        while cursor < bytes.endIndex, bytes[cursor] != 0x22, bytes[cursor] != 0x5C { cursor += 1 }
        if cursor < bytes.endIndex, bytes[cursor] == 0x22 {
            let text = String(decoding: bytes[index..<cursor], as: UTF8.self)
            index = cursor + 1
            return text
        }
        var out: [UInt8] = []
        while let byte = peek() {
            index += 1
            if byte == 0x22 { return String(decoding: out, as: UTF8.self) }
            guard byte == 0x5C else { out.append(byte); continue }
            guard let escaped = peek() else { break }
            index += 1
            switch escaped {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"): try unicodeEscape(into: &out)
            default: out.append(escaped)
            }
        }
        throw Failure(detail: "unterminated string")
    }

    private mutating func unicodeEscape(into out: inout [UInt8]) throws(Failure) {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar), literal("\\u") {
            let low = try hex4()
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.endIndex - index >= 4,
              let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw Failure(detail: "bad \\u escape")
        }
        index += 4
        return value
    }

    private mutating func skipValue() throws(Failure) {
        switch peek() {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while let byte = peek() {
                if byte == 0x22 { _ = try string(); continue }
                index += 1
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
                if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { depth -= 1; if depth == 0 { return } }
            }
            throw Failure(detail: "unterminated value")
        default:
            if literal("null") || literal("true") || literal("false") { return }
            _ = try number()
        }
    }
}
