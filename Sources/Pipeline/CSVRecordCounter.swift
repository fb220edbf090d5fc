#if canImport(Glibc)
import Glibc
#endif

/// Counts the records of CSV text the way `CSVParser` (libcsv, strict) delimits them — blank lines
/// not counted — without copying a field, and notices anything strict libcsv would refuse (a quote
/// inside an unquoted field, text after a closing quote, a NUL byte, an unclosed quote, a field over
/// `CSVParser.hardFieldLimit` bytes) without saying what: the prescan then asks libcsv itself for
/// the exact error and line. This is the prescan's fast path: most bytes of a campaign sit in quoted
/// payloads, which it crosses with `memchr` from quote to quote.
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

    mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        guard !isSuspicious, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        if memchr(base, 0, bytes.count) != nil {
            isSuspicious = true
            return
        }
        let count = bytes.count
        var index = 0
        while index < count {
            let byte = base[index]
            switch state {
            case .rowNotBegun, .fieldNotBegun:
                switch byte {
                case 0x20, 0x09: break
                case 0x0D, 0x0A:
                    if case .fieldNotBegun = state { records += 1 }
                    state = .rowNotBegun
                case 0x22:
                    state = .quoted
                    fieldStart = offset + index
                case 0x2C: state = .fieldNotBegun
                default:
                    state = .unquoted
                    fieldStart = offset + index
                }
            case .unquoted:
                switch byte {
                case 0x22:
                    isSuspicious = true
                    return
                case 0x2C: state = .fieldNotBegun
                case 0x0D, 0x0A:
                    records += 1
                    state = .rowNotBegun
                default: break
                }
            case .quoted:
                // Jump to the next quote: nothing else matters inside a quoted field.
                guard let hit = memchr(base + index, 0x22, count - index) else {
                    index = count
                    continue
                }
                index = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
                state = .quoteInQuoted(spaces: false)
            case .quoteInQuoted(let spaces):
                switch byte {
                case 0x2C: state = .fieldNotBegun
                case 0x0D, 0x0A:
                    records += 1
                    state = .rowNotBegun
                case 0x20, 0x09: state = .quoteInQuoted(spaces: true)
                case 0x22 where !spaces: state = .quoted
                default:
                    isSuspicious = true
                    return
                }
            }
            index += 1
        }
        offset += count
        switch state {
        case .unquoted, .quoted, .quoteInQuoted:
            if offset - fieldStart > CSVParser.hardFieldLimit { isSuspicious = true }
        case .rowNotBegun, .fieldNotBegun:
            break
        }
    }

    /// The end of the text: a last record without its newline counts; an open quote is suspicious.
    mutating func finish() {
        switch state {
        case .quoted: isSuspicious = true
        case .rowNotBegun: break
        case .fieldNotBegun, .unquoted, .quoteInQuoted: records += 1
        }
        state = .rowNotBegun
    }
}
