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

    /// `"text"` for plain text (see `SWAR.isPlainText`), `null` for nil.
    mutating func quotedOrNull(_ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else { literal("null"); return }
        byte(UInt8(ascii: "\""))
        verbatim(text)
        byte(UInt8(ascii: "\""))
    }

    /// `value` in decimal, as `String(value)` writes it. Digits go two at a time from a table,
    /// right to left into their final place, once their number is known.
    mutating func integer(_ value: Int64) {
        precondition(count + Self.integerBytes <= capacity, "JSONLineBuffer: more than reserved")
        var at = count
        if value < 0 {
            base[at] = UInt8(ascii: "-")
            at &+= 1
        }
        var magnitude = value.magnitude
        // At most 19 digits (Int64.min's magnitude is below 10^19), so `power` cannot overflow.
        var digits = 1
        var power: UInt64 = 10
        while magnitude >= power {
            digits &+= 1
            power &*= 10
        }
        at &+= digits
        count = at
        let pairs = Self.digitPairs.utf8Start
        while magnitude >= 100 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            at &-= 2
            base[at] = pairs[pair]
            base[at &+ 1] = pairs[pair &+ 1]
        }
        if magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude) &* 2
            base[at &- 2] = pairs[pair]
            base[at &- 1] = pairs[pair &+ 1]
        } else {
            base[at &- 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
    }

    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// A duration in ms rounded to microseconds, trailing zeros dropped, at least one decimal:
    /// `3.1`, `0.25`, `5.0`; `null` when not finite.
    mutating func milliseconds(_ value: Double) {
        guard value.isFinite else { literal("null"); return }
        precondition(count + Self.millisecondsBytes <= capacity, "JSONLineBuffer: more than reserved")
        let micros = Int64((value * 1000).rounded())
        if micros < 0 { byte(UInt8(ascii: "-")) }
        let magnitude = micros.magnitude
        integer(Int64(magnitude / 1000))
        let fraction = magnitude % 1000
        let tenths = UInt8(truncatingIfNeeded: fraction / 100)
        let hundredths = UInt8(truncatingIfNeeded: fraction / 10 % 10)
        let thousandths = UInt8(truncatingIfNeeded: fraction % 10)
        var at = count
        base[at] = UInt8(ascii: ".")
        base[at &+ 1] = UInt8(ascii: "0") &+ tenths
        at &+= 2
        if hundredths | thousandths != 0 {
            base[at] = UInt8(ascii: "0") &+ hundredths
            at &+= 1
        }
        if thousandths != 0 {
            base[at] = UInt8(ascii: "0") &+ thousandths
            at &+= 1
        }
        count = at
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
