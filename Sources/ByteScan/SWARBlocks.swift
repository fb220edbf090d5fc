/// `ByteBlocks` as two `SWAR` words: any machine's path, and the one the tests check SSE2's against.
public enum SWARBlocks: ByteBlocks {
    public typealias Block = (low: UInt64, high: UInt64)
    /// A `SWAR` mask per word: 0x80 in a flagged byte.
    public typealias Mask = (low: UInt64, high: UInt64)

    @inlinable @inline(__always)
    public static func load(_ pointer: UnsafeRawPointer) -> Block {
        (SWAR.load(pointer), SWAR.load(pointer + 8))
    }

    @inlinable @inline(__always)
    public static func store(_ block: Block, to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: block.low.littleEndian, as: UInt64.self)
        (pointer + 8).storeBytes(of: block.high.littleEndian, as: UInt64.self)
    }

    @inlinable @inline(__always)
    public static func equal(_ block: Block, _ byte: UInt8) -> Mask {
        (SWAR.bytesEqual(block.low, byte), SWAR.bytesEqual(block.high, byte))
    }

    @inlinable @inline(__always)
    public static func equal(_ block: Block, _ first: UInt8, or second: UInt8) -> Mask {
        union(equal(block, first), equal(block, second))
    }

    @inlinable @inline(__always)
    public static func atMost(_ block: Block, _ limit: UInt8) -> Mask {
        (SWAR.bytesBelow(block.low, limit &+ 1), SWAR.bytesBelow(block.high, limit &+ 1))
    }

    @inlinable @inline(__always)
    public static func plainTextStops(_ block: Block) -> Mask {
        (SWAR.plainTextStops(block.low), SWAR.plainTextStops(block.high))
    }

    @inlinable @inline(__always)
    public static func nonHexDigits(_ block: Block) -> Mask {
        (SWAR.nonHexDigits(block.low), SWAR.nonHexDigits(block.high))
    }

    @inlinable @inline(__always)
    public static func union(_ first: Mask, _ second: Mask) -> Mask {
        (first.low | second.low, first.high | second.high)
    }

    @inlinable @inline(__always)
    public static func isEmpty(_ mask: Mask) -> Bool {
        mask.low | mask.high == 0
    }

    @inlinable @inline(__always)
    public static func first(_ mask: Mask) -> Int {
        mask.low != 0 ? mask.low.trailingZeroBitCount &>> 3 : 8 &+ mask.high.trailingZeroBitCount &>> 3
    }
}
