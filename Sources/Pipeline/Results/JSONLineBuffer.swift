import ByteScan
import APNs

/// Writes a line of JSON into memory reserved for it (the result log's next frame, or a buffer then
/// copied once), through a cursor: no uniqueness check or array growth per piece. The caller
/// reserves enough (`JSONLineBuffer.integerBytes` per integer, and so on), passes only text that
/// needs no escaping to `verbatim`, and drops the line when text given to `plain` needed escaping.
struct JSONLineBuffer {
    static let integerBytes = 20
    static let millisecondsBytes = 2 * integerBytes

    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0
    /// Nonzero once some text given to `plain` needs escaping: the line is then not to be used.
    private(set) var stops: UInt64 = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Text known at compile time: a copy of known length, which the compiler turns into stores
    /// of constants.
    @inline(__always)
    mutating func literal(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        precondition(count &+ length <= capacity, "JSONLineBuffer: more than reserved")
        UnsafeMutableRawPointer(base + count).copyMemory(from: text.utf8Start, byteCount: length)
        count &+= length
    }

    /// Copies `text` and notes in `stops` whether a byte of it needs escaping in JSON (see
    /// `SWAR.plainTextStops`): the check and the copy in one pass, eight bytes a step, the last step
    /// overlapping the one before when the length is not a multiple of eight.
    @inline(__always)
    mutating func plain(_ text: UnsafeBufferPointer<UInt8>) {
        let length = text.count
        precondition(count &+ length <= capacity, "JSONLineBuffer: more than reserved")
        guard let source = UnsafeRawPointer(text.baseAddress) else { return }
        let target = UnsafeMutableRawPointer(base + count)
        count &+= length
        guard length >= 8 else {
            var k = 0
            while k < length {
                let c = source.load(fromByteOffset: k, as: UInt8.self)
                target.storeBytes(of: c, toByteOffset: k, as: UInt8.self)
                if c < 0x20 || c >= 0x80 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { stops |= 0x80 }
                k &+= 1
            }
            return
        }
        var flags: UInt64 = 0
        var k = 0
        while k &+ 8 < length {
            let word = SWAR.load(source + k)
            flags |= SWAR.plainTextStops(word)
            target.storeBytes(of: word.littleEndian, toByteOffset: k, as: UInt64.self)
            k &+= 8
        }
        let last = SWAR.load(source + (length &- 8))
        flags |= SWAR.plainTextStops(last)
        target.storeBytes(of: last.littleEndian, toByteOffset: length &- 8, as: UInt64.self)
        stops |= flags
    }

    @inline(__always)
    mutating func verbatim(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(count &+ bytes.count <= capacity, "JSONLineBuffer: more than reserved")
        if let source = bytes.baseAddress {
            UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count &+= bytes.count
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        precondition(count < capacity, "JSONLineBuffer: more than reserved")
        base[count] = value
        count &+= 1
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
        let micros = (value * 1000).nearestInt64
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
