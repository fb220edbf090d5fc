import ByteScan
#if canImport(Glibc)
import Glibc
#endif

/// Counts the records of CSV text the way `CSVParser` (libcsv, strict) delimits them — blank lines
/// not counted — without copying a field, and notices anything strict libcsv would refuse (a quote
/// inside an unquoted field, text after a closing quote, a NUL byte, an unclosed quote, a field over
/// `CSVParser.hardFieldLimit` bytes) without saying what: the prescan then asks libcsv itself for
/// the exact error and line. This is the prescan's fast path, and it runs over every byte of a
/// campaign: inside a field it looks at 32 bytes a step (two `SSE2Blocks` tests on x86-64; 16, as two
/// 8-byte SWAR words, elsewhere) and skips a step holding no byte that could end the field; the
/// byte that could is then handled one at a time.
struct CSVRecordCounter {
    private enum State {
        case rowNotBegun, fieldNotBegun, unquoted, quoted
        /// A quote inside a quoted field: the field's end, or the first half of `""`.
        case quoteInQuoted(spaces: Bool)
    }

    private var state = State.rowNotBegun
    /// Records with at least one field, the header included.
    private(set) var records = 0
    /// Something strict libcsv would refuse lies in the text so far.
    private(set) var isSuspicious = false
    private var offset = 0
    private var fieldStart = 0
    /// Told where each token and topic field lies, when the run looks for duplicate tokens.
    var duplicates: DuplicateTokensScan?

    /// `startsAfterHeader`: the text starts at a record after the header (the second half of a
    /// file, `PrescanHalves`): `records` then counts the header as seen, and its first record is data.
    init(startsAfterHeader: Bool = false) {
        records = startsAfterHeader ? 1 : 0
    }

    /// Whether the text so far ends between records (a line break outside quotes, or nothing yet).
    var isBetweenRecords: Bool {
        if case .rowNotBegun = state { true } else { false }
    }

    mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        guard !isSuspicious, let raw = bytes.baseAddress else { return }
        if memchr(raw, 0, bytes.count) != nil {
            isSuspicious = true
            return
        }
        let base = raw.assumingMemoryBound(to: UInt8.self)
        let count = bytes.count
        // A local: the stored optional, bound at each use, cost a retain and a release per row; and
        // unretained (the stored one keeps it alive throughout), as a binding still cost two a row.
        let duplicates = self.duplicates.map { Unmanaged.passUnretained($0) }
        var index = 0
        while index < count {
            switch state {
            case .quoted:
                index = Self.skipQuoted(raw, from: index, count: count)
                if index < count, base[index] == 0x22 { state = .quoteInQuoted(spaces: false) }
            case .unquoted:
                index = Self.skipUnquoted(raw, from: index, count: count)
                guard index < count else { break }
                switch base[index] {
                case 0x22:
                    isSuspicious = true
                    return
                case 0x2C:
                    state = .fieldNotBegun
                    if let duplicates {
                        duplicates._withUnsafeGuaranteedRef {
                            $0.unquotedEnds(at: index, base)
                            $0.nextField()
                        }
                    }
                case 0x0D, 0x0A:
                    records += 1
                    state = .rowNotBegun
                    if let duplicates {
                        let isHeader = records == 1
                        duplicates._withUnsafeGuaranteedRef {
                            $0.unquotedEnds(at: index, base)
                            $0.rowEnds(isHeader: isHeader)
                        }
                    }
                default: break
                }
            case .rowNotBegun, .fieldNotBegun:
                switch base[index] {
                case 0x20, 0x09: break
                case 0x0D, 0x0A:
                    if case .fieldNotBegun = state {
                        records += 1
                        let isHeader = records == 1
                        duplicates?._withUnsafeGuaranteedRef { $0.rowEnds(isHeader: isHeader) }
                    }
                    state = .rowNotBegun
                case 0x22:
                    state = .quoted
                    fieldStart = offset + index
                    duplicates?._withUnsafeGuaranteedRef { $0.fieldBegins(at: index + 1) }
                case 0x2C:
                    state = .fieldNotBegun
                    duplicates?._withUnsafeGuaranteedRef { $0.nextField() }
                default:
                    state = .unquoted
                    fieldStart = offset + index
                    duplicates?._withUnsafeGuaranteedRef { $0.fieldBegins(at: index) }
                }
            case .quoteInQuoted(let spaces):
                switch base[index] {
                case 0x2C:
                    state = .fieldNotBegun
                    if let duplicates {
                        duplicates._withUnsafeGuaranteedRef {
                            $0.quotedEnds(at: index, base)
                            $0.nextField()
                        }
                    }
                case 0x0D, 0x0A:
                    records += 1
                    state = .rowNotBegun
                    if let duplicates {
                        let isHeader = records == 1
                        duplicates._withUnsafeGuaranteedRef {
                            $0.quotedEnds(at: index, base)
                            $0.rowEnds(isHeader: isHeader)
                        }
                    }
                case 0x20, 0x09: state = .quoteInQuoted(spaces: true)
                case 0x22 where !spaces: state = .quoted
                default:
                    isSuspicious = true
                    return
                }
            }
            index += 1
        }
        if let duplicates {
            let inField = switch state {
            case .unquoted, .quoted, .quoteInQuoted: true
            case .rowNotBegun, .fieldNotBegun: false
            }
            duplicates._withUnsafeGuaranteedRef { $0.chunkEnds(count: count, base, inField: inField) }
        }
        offset += count
        switch state {
        case .unquoted, .quoted, .quoteInQuoted:
            if offset - fieldStart > CSVParser.hardFieldLimit { isSuspicious = true }
        case .rowNotBegun, .fieldNotBegun:
            break
        }
    }

    /// In a quoted field, the offset of the first quote that may end it (one of a `""` within a
    /// step does not), or of a byte among the last few, or `count`. Only a quote matters there. A
    /// JSON payload holds a `""` every 15 bytes or so, and each pair costs a few mask operations,
    /// not a stop.
    @inline(__always)
    static func skipQuoted(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        #if arch(x86_64)
        var index = start
        while count &- index >= 32 {
            let quotes = Self.mask(raw + index) { SSE2Blocks.equal($0, 0x22) }
            if quotes != 0 {
                let ending = endingQuoteBits(quotes)
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

    /// The quotes of a step (one bit a byte) that are not one of a `""` in it, paired from the
    /// first; a quote in the last byte counts as one (the next byte decides). Runs of two quotes
    /// take a few operations; a longer run is paired one quote at a time.
    @inline(__always)
    static func endingQuoteBits(_ quotes: UInt32) -> UInt32 {
        let pairs = quotes & (quotes &>> 1)
        guard pairs & (pairs &>> 1) == 0 else { return endingQuoteBitsInRuns(quotes) }
        return quotes & ~(pairs | (pairs &<< 1))
    }

    @inline(never)
    static func endingQuoteBitsInRuns(_ quotes: UInt32) -> UInt32 {
        var quotes = quotes
        while quotes != 0 {
            let at = quotes.trailingZeroBitCount
            guard at < 31, quotes & (2 &<< at) != 0 else { return 1 &<< at }
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
                    let ending = endingQuotes(first)
                    if ending != 0 {
                        // A quote in the last byte followed by one in the next word: a `""`.
                        guard ending == 0x80 &<< 56, second & 0x80 != 0 else {
                            return index &+ ending.trailingZeroBitCount &>> 3
                        }
                        second &= ~0x80
                    }
                }
                if second != 0 {
                    let ending = endingQuotes(second)
                    if ending != 0 { return index &+ 8 &+ ending.trailingZeroBitCount &>> 3 }
                }
            }
            index &+= 16
        }
        while count &- index >= 8 {
            let quotes = SWAR.bytesEqual(SWAR.load(raw + index), 0x22)
            if quotes != 0 {
                let ending = endingQuotes(quotes)
                if ending != 0 { return index &+ ending.trailingZeroBitCount &>> 3 }
            }
            index &+= 8
        }
        return index
    }

    /// The quotes of a word (a `SWAR` mask) that are not one of a `""` in it, paired from the
    /// first; a quote in the last byte counts as one (the next byte decides). Runs of two quotes
    /// (`""`, an escaped quote) take a few operations; a longer run is paired one quote at a time.
    @inline(__always)
    static func endingQuotes(_ quotes: UInt64) -> UInt64 {
        let pairs = quotes & (quotes &>> 8)
        guard pairs & (pairs &>> 8) == 0 else { return endingQuotesInRuns(quotes) }
        return quotes & ~(pairs | (pairs &<< 8))
    }

    @inline(never)
    static func endingQuotesInRuns(_ quotes: UInt64) -> UInt64 {
        var quotes = quotes
        while quotes != 0 {
            let at = quotes.trailingZeroBitCount &>> 3
            guard at < 7, quotes & (0x80 &<< (at &* 8 &+ 8)) != 0 else { return 0x80 &<< (at &* 8) }
            quotes &= quotes &- 1
            quotes &= quotes &- 1
        }
        return 0
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

    /// The end of the text: a last record without its newline counts; an open quote is suspicious.
    mutating func finish() {
        switch state {
        case .quoted: isSuspicious = true
        case .rowNotBegun: break
        case .fieldNotBegun, .unquoted, .quoteInQuoted:
            records += 1
            if let duplicates {
                if case .unquoted = state { duplicates.unquotedEndsAtInputEnd() } else { duplicates.quotedEndsAtInputEnd() }
                duplicates.rowEnds(isHeader: records == 1)
            }
        }
        state = .rowNotBegun
    }
}
