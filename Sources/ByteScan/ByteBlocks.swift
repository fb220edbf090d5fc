/// Byte tests on 16 bytes at once, for the scans that run over every byte of a campaign (the CSV
/// splitter, the JSON check, device tokens). Two implementations: `SSE2Blocks` on x86-64, whose
/// baseline SSE2 tests 16 bytes in a few instructions, and `SWARBlocks` (two 8-byte words) on every
/// machine; `NativeBlocks` names the one a scan uses here. The scans are generic over this protocol
/// so that the tests run both on the same inputs, whichever machine they run on.
///
/// A mask flags some bytes of a block; only its first flagged byte is promised (`SWARBlocks`'
/// plain-text test may flag a byte after a true one too), which is all a scan needs.
///
/// Public and inlinable so that the scans of APNs and Pipeline get these inlined (see `SWAR`).
public protocol ByteBlocks {
    associatedtype Block
    associatedtype Mask

    /// The 16 bytes at `pointer`, any alignment.
    static func load(_ pointer: UnsafeRawPointer) -> Block
    /// Stores `block` at `pointer`, any alignment.
    static func store(_ block: Block, to pointer: UnsafeMutableRawPointer)
    /// The bytes equal to `byte`.
    static func equal(_ block: Block, _ byte: UInt8) -> Mask
    /// The bytes equal to `first` or to `second`.
    static func equal(_ block: Block, _ first: UInt8, or second: UInt8) -> Mask
    /// The bytes at most `limit` (below 0x80).
    static func atMost(_ block: Block, _ limit: UInt8) -> Mask
    /// The bytes that end plain JSON string text: below 0x20, `"`, `\`, 0x80 and above.
    static func plainTextStops(_ block: Block) -> Mask
    /// The bytes that are not hex digits (0-9, a-f, A-F).
    static func nonHexDigits(_ block: Block) -> Mask
    /// The bytes flagged in either mask.
    static func union(_ first: Mask, _ second: Mask) -> Mask
    /// Whether no byte is flagged.
    static func isEmpty(_ mask: Mask) -> Bool
    /// The offset in its block (0-15) of the first flagged byte; `mask` is not empty.
    static func first(_ mask: Mask) -> Int
}

#if arch(x86_64)
public typealias NativeBlocks = SSE2Blocks
#else
public typealias NativeBlocks = SWARBlocks
#endif
