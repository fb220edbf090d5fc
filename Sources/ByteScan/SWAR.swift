/// Byte tests on 8 bytes at once in a `UInt64` (SWAR), for the scans that run over every byte of a
/// campaign. A mask has 0x80 set in each byte that passes and nothing else, exactly (no false
/// positives from borrows), so `trailingZeroBitCount >> 3` is the offset of the first such byte and
/// any other bit can be trusted too.
///
/// Public, and inlinable, so that the scans of APNs and Pipeline get these inlined: Swift 6.3 does not
/// inline a `package` function into another module, and a call per word costs more than the test.
public enum SWAR {
    /// The 8 bytes at `pointer`, the first in the lowest bits whatever the machine's byte order.
    @inlinable @inline(__always)
    public static func load(_ pointer: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
    }

    /// The bytes of `word` equal to `byte`.
    @inlinable @inline(__always)
    public static func bytesEqual(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        zeroBytes(word ^ (0x0101_0101_0101_0101 &* UInt64(byte)))
    }

    /// The zero bytes of `word`. Adding 0x7F to the low 7 bits of a byte cannot carry into the next.
    @inlinable @inline(__always)
    public static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(((word & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F) | word | 0x7F7F_7F7F_7F7F_7F7F)
    }

    /// The bytes of `word` below `limit` (at most 0x80). A byte with 0x80 set minus at most 0x80
    /// cannot borrow from the next.
    @inlinable @inline(__always)
    public static func bytesBelow(_ word: UInt64, _ limit: UInt8) -> UInt64 {
        ~(((word | 0x8080_8080_8080_8080) &- 0x0101_0101_0101_0101 &* UInt64(limit)) | word) & 0x8080_8080_8080_8080
    }

    /// Bytes that end plain JSON string text (< 0x20, `"`, `\`, >= 0x80) in `word`: the classic
    /// "has a byte less than n" / "has a zero byte" tricks, where `(x & ~word) | word` is
    /// `x | word`. Unlike the other masks here a borrow can flag a byte above a true one (never
    /// below), so only the lowest flag is exact, and zero means none. The JSON validator's string
    /// scan and `isPlainText` both use it.
    @inlinable @inline(__always)
    public static func plainTextStops(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return ((word &- ones &* 0x20) | ((word ^ (ones &* 0x22)) &- ones)
            | ((word ^ (ones &* 0x5C)) &- ones) | word) & (ones &* 0x80)
    }

    /// Whether `bytes` may go between quotes in JSON as they are: printable ASCII (and DEL) other
    /// than `"` and `\`. Eight bytes a step, then byte by byte for the tail.
    @inlinable
    public static func isPlainText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return true }
        let end = bytes.count
        var k = 0
        var flags: UInt64 = 0
        while end &- k >= 8 {
            flags |= plainTextStops(load(base + k))
            k &+= 8
        }
        while k < end {
            let c = base.load(fromByteOffset: k, as: UInt8.self)
            if c < 0x20 || c >= 0x80 || c == 0x22 || c == 0x5C { return false }
            k &+= 1
        }
        return flags == 0
    }

    /// The bytes of `word` that are not hex digits (0-9, a-f, A-F). Each byte is tested on its own
    /// 7 low bits (adding at most 0x50 cannot carry out of a byte) and then refused if its top bit
    /// is set.
    @inlinable @inline(__always)
    public static func nonHexDigits(_ word: UInt64) -> UInt64 {
        let low = word & 0x7F7F_7F7F_7F7F_7F7F
        let folded = low | 0x2020_2020_2020_2020
        // Top bit of `low + (0x80 - n)` set: the byte is at least n.
        let digit = (low &+ 0x5050_5050_5050_5050) & ~(low &+ 0x4646_4646_4646_4646)
        let letter = (folded &+ 0x1F1F_1F1F_1F1F_1F1F) & ~(folded &+ 0x1919_1919_1919_1919)
        return ~((digit | letter) & ~word) & 0x8080_8080_8080_8080
    }
}
