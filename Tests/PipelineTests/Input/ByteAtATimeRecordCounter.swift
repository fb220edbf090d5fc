#if canImport(Glibc)
import Glibc
#endif
@testable import Pipeline

/// `CSVRecordCounter` as it was before it read 8 bytes at a time: one byte per step, `memchr` from
/// quote to quote. Kept as the oracle the word-at-a-time counter must agree with at every chunk.
struct ByteAtATimeRecordCounter {
    private enum State {
        case rowNotBegun, fieldNotBegun, unquoted, quoted
        case quoteInQuoted(spaces: Bool)
    }

    private var state = State.rowNotBegun
    private(set) var records = 0
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

    mutating func finish() {
        switch state {
        case .quoted: isSuspicious = true
        case .rowNotBegun: break
        case .fieldNotBegun, .unquoted, .quoteInQuoted: records += 1
        }
        state = .rowNotBegun
    }
}
