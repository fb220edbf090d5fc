/// Writes a line of JSON into memory reserved for it, through a cursor: no capacity check or
/// uniqueness check per piece, one copy into the output array at the end. The caller reserves
/// enough (`JSONLineBuffer.integerBytes` per integer, and so on) and passes only text that needs no
/// escaping to `verbatim`.
struct JSONLineBuffer {
    static let integerBytes = 20
    static let millisecondsBytes = 2 * integerBytes

    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { verbatim($0) }
    }

    @inline(__always)
    mutating func verbatim(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(count + bytes.count <= capacity, "JSONLineBuffer: more than reserved")
        if let source = bytes.baseAddress { (base + count).update(from: source, count: bytes.count) }
        count += bytes.count
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        precondition(count < capacity, "JSONLineBuffer: more than reserved")
        base[count] = value
        count += 1
    }

    /// `"text"` for plain text (see `isPlain`), `null` for nil.
    mutating func quotedOrNull(_ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else { literal("null"); return }
        byte(UInt8(ascii: "\""))
        verbatim(text)
        byte(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int64) {
        precondition(count + Self.integerBytes <= capacity, "JSONLineBuffer: more than reserved")
        if value < 0 { byte(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt64 = 1
        while magnitude / scale >= 10 {
            scale *= 10
            digits += 1
        }
        for _ in 0..<digits {
            base[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / scale)
            count += 1
            magnitude %= scale
            scale /= 10
        }
    }

    /// A duration in ms rounded to microseconds, trailing zeros dropped, at least one decimal:
    /// `3.1`, `0.25`, `5.0`; `null` when not finite.
    mutating func milliseconds(_ value: Double) {
        guard value.isFinite else { literal("null"); return }
        let micros = Int64((value * 1000).rounded())
        if micros < 0 { byte(UInt8(ascii: "-")) }
        let magnitude = micros.magnitude
        integer(Int64(magnitude / 1000))
        byte(UInt8(ascii: "."))
        var fraction = magnitude % 1000
        var width = 3
        while width > 1 && fraction % 10 == 0 { fraction /= 10; width -= 1 }
        var divisor: UInt64 = width == 3 ? 100 : width == 2 ? 10 : 1
        while divisor > 0 {
            byte(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }

    /// Text `verbatim` may take inside quotes: printable ASCII other than `"` and `\`.
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var odd: UInt8 = 0
        for byte in bytes {
            odd |= (byte &- 0x20 >= 0x5F ? 1 : 0) | (byte == 0x22 ? 1 : 0) | (byte == 0x5C ? 1 : 0)
        }
        return odd == 0
    }

    /// Runs `body` with a buffer of `capacity` bytes and appends what it wrote to `out`.
    static func append(to out: inout [UInt8], capacity: Int, _ body: (inout JSONLineBuffer) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { memory in
            var buffer = JSONLineBuffer(memory)
            body(&buffer)
            out.append(contentsOf: buffer.written)
        }
    }
}
