import ByteScan

/// The machine's fast path inside a field: from where a field's bytes go on, the first byte that
/// may change its state. Two builds: SSE2 (32 bytes a step, x86-64) and SWAR (16 bytes a step,
/// other machines and x86-64's tail); `CSVFieldSkipsTests` holds both to one contract.
extension CSVStateMachine {
    /// In a quoted field, the offset of the first quote that may end it (one of a `""` within a
    /// step does not), or of a byte among the last few, or `count`. Only a quote matters there.
    @inline(__always)
    static func skipQuoted(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        #if arch(x86_64)
        var index = start
        while count &- index >= 32 {
            let quotes = Self.mask(raw + index) { SSE2Blocks.equal($0, 0x22) }
            if quotes != 0 {
                let ending = endingQuotes(quotes, stride: 1)
                if ending != 0 { return index &+ ending.trailingZeroBitCount }
            }
            index &+= 32
        }
        return skipQuotedSWAR(raw, from: index, count: count)
        #else
        return skipQuotedSWAR(raw, from: start, count: count)
        #endif
    }

    /// In an unquoted field, the offset of the first byte below `-` (a comma, CR, LF or quote among
    /// them), or of a byte among the last few, or `count`. A run of hex digits, letters or digits
    /// has none: a 64-digit token is two steps.
    @inline(__always)
    static func skipUnquoted(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        #if arch(x86_64)
        var index = start
        while count &- index >= 32 {
            let below = Self.mask(raw + index) { SSE2Blocks.atMost($0, 0x2C) }
            if below != 0 { return index &+ below.trailingZeroBitCount }
            index &+= 32
        }
        return skipUnquotedSWAR(raw, from: index, count: count)
        #else
        return skipUnquotedSWAR(raw, from: start, count: count)
        #endif
    }

    #if arch(x86_64)
    /// One bit a byte of the 32 at `pointer`, the first byte's lowest: `test`'s masks of its two blocks.
    @inline(__always)
    private static func mask(_ pointer: UnsafeRawPointer, _ test: (SSE2Blocks.Block) -> SSE2Blocks.Mask) -> UInt32 {
        test(SSE2Blocks.load(pointer)) | test(SSE2Blocks.load(pointer + 16)) &<< 16
    }
    #endif

    /// The quotes of a mask that are not one of a `""` in it, paired from the first; a quote in
    /// the last byte counts as one (the next byte decides). A byte's bit is `stride` bits after the
    /// one before it: 1 in a step's SSE2 mask, 8 in a `SWAR` word. Runs of two quotes (`""`, an
    /// escaped quote) take a few operations; a longer run is paired one quote at a time.
    @inline(__always)
    static func endingQuotes<Mask: FixedWidthInteger>(_ quotes: Mask, stride: Int) -> Mask {
        let pairs = quotes & (quotes &>> stride)
        guard pairs & (pairs &>> stride) == 0 else { return endingQuotesInRuns(quotes, stride: stride) }
        return quotes & ~(pairs | (pairs &<< stride))
    }

    @inline(never)
    static func endingQuotesInRuns<Mask: FixedWidthInteger>(_ quotes: Mask, stride: Int) -> Mask {
        var quotes = quotes
        while quotes != 0 {
            let at = quotes.trailingZeroBitCount
            guard at &+ stride < Mask.bitWidth, quotes & (1 &<< (at &+ stride)) != 0 else { return 1 &<< at }
            quotes &= quotes &- 1
            quotes &= quotes &- 1
        }
        return 0
    }

    /// `skipQuoted` 16 bytes a step, as two SWAR words (another machine's path, and the tail of
    /// x86-64's): stops before the last 7 bytes, and at a quote ending a step.
    @inline(__always)
    static func skipQuotedSWAR(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        var index = start
        while count &- index >= 16 {
            let first = SWAR.bytesEqual(SWAR.load(raw + index), 0x22)
            var second = SWAR.bytesEqual(SWAR.load(raw + (index &+ 8)), 0x22)
            if first | second != 0 {
                if first != 0 {
                    let ending = endingQuotes(first, stride: 8)
                    if ending != 0 {
                        // A quote in the last byte followed by one in the next word: a `""`.
                        guard ending == 0x80 &<< 56, second & 0x80 != 0 else {
                            return index &+ ending.trailingZeroBitCount &>> 3
                        }
                        second &= ~0x80
                    }
                }
                if second != 0 {
                    let ending = endingQuotes(second, stride: 8)
                    if ending != 0 { return index &+ 8 &+ ending.trailingZeroBitCount &>> 3 }
                }
            }
            index &+= 16
        }
        while count &- index >= 8 {
            let quotes = SWAR.bytesEqual(SWAR.load(raw + index), 0x22)
            if quotes != 0 {
                let ending = endingQuotes(quotes, stride: 8)
                if ending != 0 { return index &+ ending.trailingZeroBitCount &>> 3 }
            }
            index &+= 8
        }
        return index
    }

    /// `skipUnquoted` 16 bytes a step, as two SWAR words (another machine's path, and the tail of
    /// x86-64's): stops before the last 7 bytes.
    @inline(__always)
    static func skipUnquotedSWAR(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        var index = start
        while count &- index >= 16 {
            let first = SWAR.bytesBelow(SWAR.load(raw + index), 0x2D)
            let second = SWAR.bytesBelow(SWAR.load(raw + (index &+ 8)), 0x2D)
            if first | second != 0 {
                return index &+ (first != 0 ? first.trailingZeroBitCount &>> 3 : 8 &+ second.trailingZeroBitCount &>> 3)
            }
            index &+= 16
        }
        while count &- index >= 8 {
            let below = SWAR.bytesBelow(SWAR.load(raw + index), 0x2D)
            if below != 0 { return index &+ below.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        return index
    }
}
