#if arch(x86_64)
import _Builtin_intrinsics.intel

/// `ByteBlocks` in SSE2, which every x86-64 has: a test is a compare or two on one 16-byte
/// register, and `pmovmskb` makes its mask one bit a byte. SSE2 compares bytes as signed, so a
/// byte of 0x80 and above is below 0x20 (the plain-text stops want those too), and an unsigned
/// range test adds a bias first.
public enum SSE2Blocks: ByteBlocks {
    public typealias Block = __m128i
    /// Bit n: byte n of the block.
    public typealias Mask = UInt32

    @inlinable @inline(__always)
    public static func load(_ pointer: UnsafeRawPointer) -> Block {
        _mm_loadu_si128(pointer.assumingMemoryBound(to: __m128i_u.self))
    }

    @inlinable @inline(__always)
    public static func store(_ block: Block, to pointer: UnsafeMutableRawPointer) {
        _mm_storeu_si128(pointer.assumingMemoryBound(to: __m128i_u.self), block)
    }

    @inlinable @inline(__always)
    static func mask(_ bytes: Block) -> Mask {
        UInt32(truncatingIfNeeded: _mm_movemask_epi8(bytes))
    }

    @inlinable @inline(__always)
    static func all(_ byte: UInt8) -> Block {
        _mm_set1_epi8(Int8(bitPattern: byte))
    }

    @inlinable @inline(__always)
    public static func equal(_ block: Block, _ byte: UInt8) -> Mask {
        mask(_mm_cmpeq_epi8(block, all(byte)))
    }

    @inlinable @inline(__always)
    public static func equal(_ block: Block, _ first: UInt8, or second: UInt8) -> Mask {
        mask(_mm_or_si128(_mm_cmpeq_epi8(block, all(first)), _mm_cmpeq_epi8(block, all(second))))
    }

    /// Unsigned: `min(byte, limit) == byte`.
    @inlinable @inline(__always)
    public static func atMost(_ block: Block, _ limit: UInt8) -> Mask {
        mask(_mm_cmpeq_epi8(_mm_min_epu8(block, all(limit)), block))
    }

    /// `byte ^ 2` is below 0x21 signed for exactly the control bytes, 0x80 and above, and `"`
    /// (0x22 ^ 2 is 0x20): one compare for three of the four.
    @inlinable @inline(__always)
    public static func plainTextStops(_ block: Block) -> Mask {
        let controlHighOrQuote = _mm_cmplt_epi8(_mm_xor_si128(block, all(0x02)), all(0x21))
        return mask(_mm_or_si128(controlHighOrQuote, _mm_cmpeq_epi8(block, all(0x5C))))
    }

    /// A byte is a digit when `byte - 0x30` is below 10 unsigned, that is when `byte - 0x30 + 0x80`
    /// is below `10 + 0x80` signed; a letter likewise with `byte | 0x20` against 0x61 and 6.
    @inlinable @inline(__always)
    public static func nonHexDigits(_ block: Block) -> Mask {
        let digit = _mm_cmplt_epi8(_mm_add_epi8(block, all(0x50)), all(0x8A))
        let letter = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(block, all(0x20)), all(0x1F)), all(0x86))
        return mask(_mm_or_si128(digit, letter)) ^ 0xFFFF
    }

    @inlinable @inline(__always)
    public static func union(_ first: Mask, _ second: Mask) -> Mask {
        first | second
    }

    @inlinable @inline(__always)
    public static func isEmpty(_ mask: Mask) -> Bool {
        mask == 0
    }

    @inlinable @inline(__always)
    public static func first(_ mask: Mask) -> Int {
        mask.trailingZeroBitCount
    }
}
#endif
