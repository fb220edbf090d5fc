/// The JSON body of an APNs error answer, `{"reason":"BadDeviceToken"}`, with `"timestamp"`
/// (milliseconds since the epoch) on a 410. GOAWAY debug data uses the same shape.
/// Decoding is hand-written over bytes (no Foundation) and never fails loudly: a body that is not
/// one JSON object gives nil, a member of the wrong type is ignored.
public struct ErrorBody: Sendable, Hashable {
    /// The reason exactly as sent, including ones `Reason` does not know.
    public var reasonText: String?
    /// Milliseconds since the epoch: when APNs learnt the token is dead (410 only).
    public var timestamp: Int64?

    /// A body with `reasonText` as sent, including a reason `Reason` does not know.
    public init(reasonText: String?, timestamp: Int64? = nil) {
        self.reasonText = reasonText
        self.timestamp = timestamp
    }

    /// A body with a reason this module knows (the mock's answers).
    public init(reason: Reason, timestamp: Int64? = nil) {
        self.init(reasonText: reason.name, timestamp: timestamp)
    }

    /// The reason, when `reasonText` is one `Reason` knows.
    public var reason: Reason? { reasonText.flatMap { Reason(name: $0) } }

    /// Reads `"reason"` (a string) and `"timestamp"` (a non-negative integer) from a JSON
    /// object; other members are skipped. Nil when the body is empty, cut short or not JSON.
    public init?(decoding body: some Collection<UInt8>) {
        let bytes = Array(body)
        guard JSONValidator.validate(bytes) == nil else { return nil }
        var reasonText: String?
        var timestamp: Int64?
        var scanner = MemberScanner(bytes: bytes)
        while let (key, valueStart) = scanner.nextMember() {
            if key == Array("reason".utf8), bytes[valueStart] == UInt8(ascii: "\"") {
                reasonText = String(decoding: scanner.decodeString(at: valueStart), as: UTF8.self)
            } else if key == Array("timestamp".utf8) {
                timestamp = scanner.integer(at: valueStart)
            }
        }
        self.reasonText = reasonText
        self.timestamp = timestamp
    }

    /// `{"reason":"…"}`, plus `"timestamp":…` when there is one; `{}` without a reason.
    public func encoded() -> [UInt8] {
        var out = Array("{".utf8)
        if let reasonText {
            out += Array("\"reason\":".utf8)
            appendJSONString(reasonText, to: &out)
        }
        if let timestamp {
            if reasonText != nil { out.append(UInt8(ascii: ",")) }
            out += Array("\"timestamp\":\(timestamp)".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

private func appendJSONString(_ text: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        case 0..<0x20:
            out += Array("\\u00".utf8)
            out.append(lowercaseHexDigit(byte >> 4))
            out.append(lowercaseHexDigit(byte & 0x0f))
        default:
            out.append(byte)
        }
    }
    out.append(UInt8(ascii: "\""))
}

/// Walks the top-level members of a JSON object already proven valid by `JSONValidator`,
/// so it can skip values without re-checking them.
private struct MemberScanner {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
        skipWhitespace()
        i += 1  // the opening brace
    }

    /// The next member's decoded key and the offset of its value; nil after the last one.
    mutating func nextMember() -> (key: [UInt8], valueStart: Int)? {
        skipWhitespace()
        if bytes[i] == UInt8(ascii: ",") { i += 1; skipWhitespace() }
        guard bytes[i] == UInt8(ascii: "\"") else { return nil }  // the closing brace
        let key = decodeString(at: i)
        skipString()
        skipWhitespace()
        i += 1  // the colon
        skipWhitespace()
        let valueStart = i
        skipValue()
        return (key, valueStart)
    }

    mutating func skipWhitespace() {
        while i < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[i]) { i += 1 }
    }

    mutating func skipString() {
        i += 1
        while bytes[i] != UInt8(ascii: "\"") {
            i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1
        }
        i += 1
    }

    mutating func skipValue() {
        var depth = 0
        repeat {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                skipString()
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","), 0x20, 0x09, 0x0a, 0x0d:
                if depth == 0 { return }
            default:
                break
            }
            i += 1
        } while depth > 0 || !isValueEnd(bytes[i])
    }

    func isValueEnd(_ c: UInt8) -> Bool {
        [UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0a, 0x0d].contains(c)
    }

    /// The UTF-8 bytes of the string starting at `start`, escapes decoded.
    func decodeString(at start: Int) -> [UInt8] {
        var out = [UInt8]()
        var k = start + 1
        while bytes[k] != UInt8(ascii: "\"") {
            guard bytes[k] == UInt8(ascii: "\\") else {
                out.append(bytes[k])
                k += 1
                continue
            }
            let escaped = bytes[k + 1]
            k += 2
            switch escaped {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(codeUnit(at: k))
                k += 4
                if (0xD800...0xDBFF).contains(scalar) {  // the validator proved a low half follows
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (UInt32(codeUnit(at: k + 2)) - 0xDC00)
                    k += 6
                }
                out += Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: out.append(escaped)  // \" \\ \/
            }
        }
        return out
    }

    func codeUnit(at offset: Int) -> UInt16 {
        var unit: UInt16 = 0
        for k in offset..<offset + 4 { unit = unit << 4 | UInt16(hexValue(bytes[k]) ?? 0) }
        return unit
    }

    /// A non-negative integer value that fits in Int64; nil for anything else.
    func integer(at start: Int) -> Int64? {
        var value: Int64 = 0
        var k = start
        while k < bytes.count, let digit = decimalValue(bytes[k]) {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = sum
            k += 1
        }
        guard k > start, k < bytes.count, isValueEnd(bytes[k]) else { return nil }
        return value
    }
}

func decimalValue(_ c: UInt8) -> UInt8? {
    c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : nil
}
