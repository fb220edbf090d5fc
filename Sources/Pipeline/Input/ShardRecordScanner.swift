#if canImport(Glibc)
import Glibc
#endif

/// The sharded prescan's fast path: delimits records as `CSVRecordCounter` does (the way strict
/// libcsv delimits them, blank lines not counted), and on the way hashes each record's device
/// token field and counts its fields, so that it marks the shard's rows exactly as the reader will
/// place them (``Shard``), at a fraction of a libcsv pass: outside the token field it skips 8
/// bytes at a time as the counter does.
///
/// It leaves the unusual to libcsv by saying `isSuspicious`: whatever the counter finds suspicious,
/// a field over 64 KiB (its row's placement depends on the exact length libcsv sees), a quoted
/// token holding `""`, or a token with blanks inside it. The prescan then makes its libcsv pass.
struct ShardRecordScanner {
    private enum State {
        case rowNotBegun, fieldNotBegun, unquoted, quoted
        /// A quote inside a quoted field: the field's end, or the first half of `""`.
        case quoteInQuoted(spaces: Bool)
    }

    private let shardIndex: Int
    private let shardCount: UInt64
    private let tokenField: Int
    private let headerFields: Int
    private var state = State.rowNotBegun
    private(set) var isSuspicious = false
    /// The shard's data rows.
    private(set) var members = DoneRows()
    private var headerSeen = false
    private var row = 0
    private var field = 0
    private var offset = 0
    private var fieldStart = 0
    private var hash = Shard.fnvOffsetBasis
    private var hashed = false
    private var pendingBlanks = false

    /// `tokenField`: the device token's place in the header (0-based); `headerFields`: the
    /// header's field count, which a row must have for its token to be read.
    init(shard: Shard, tokenField: Int, headerFields: Int) {
        shardIndex = shard.index
        shardCount = UInt64(shard.count)
        self.tokenField = tokenField
        self.headerFields = headerFields
    }

    mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        guard !isSuspicious, let raw = bytes.baseAddress else { return }
        if memchr(raw, 0, bytes.count) != nil {
            isSuspicious = true
            return
        }
        let base = raw.assumingMemoryBound(to: UInt8.self)
        let count = bytes.count
        var index = 0
        while index < count {
            switch state {
            case .quoted:
                if field == tokenField {
                    if base[index] == 0x22 { state = .quoteInQuoted(spaces: false) } else { feed(base[index]) }
                } else {
                    index = CSVRecordCounter.skipQuoted(raw, from: index, count: count)
                    if index < count, base[index] == 0x22 { state = .quoteInQuoted(spaces: false) }
                }
            case .unquoted:
                if field != tokenField {
                    index = CSVRecordCounter.skipUnquoted(raw, from: index, count: count)
                    guard index < count else { break }
                }
                switch base[index] {
                case 0x22:
                    isSuspicious = true
                    return
                case 0x2C:
                    endField(at: offset + index)
                    state = .fieldNotBegun
                case 0x0D, 0x0A:
                    endField(at: offset + index)
                    endRecord()
                    state = .rowNotBegun
                default:
                    if field == tokenField { feed(base[index]) }
                }
            case .rowNotBegun, .fieldNotBegun:
                switch base[index] {
                case 0x20, 0x09: break
                case 0x0D, 0x0A:
                    if case .fieldNotBegun = state {
                        fieldStart = offset + index
                        endField(at: offset + index)
                        endRecord()
                    }
                    state = .rowNotBegun
                case 0x22:
                    state = .quoted
                    fieldStart = offset + index
                case 0x2C:
                    fieldStart = offset + index
                    endField(at: offset + index)
                    state = .fieldNotBegun
                default:
                    state = .unquoted
                    fieldStart = offset + index
                    if field == tokenField { feed(base[index]) }
                }
            case .quoteInQuoted(let spaces):
                switch base[index] {
                case 0x2C:
                    endField(at: offset + index)
                    state = .fieldNotBegun
                case 0x0D, 0x0A:
                    endField(at: offset + index)
                    endRecord()
                    state = .rowNotBegun
                case 0x20, 0x09: state = .quoteInQuoted(spaces: true)
                case 0x22 where !spaces && field != tokenField: state = .quoted
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
            if offset - fieldStart > CSVParser.maxFieldBytes { isSuspicious = true }
        case .rowNotBegun, .fieldNotBegun:
            break
        }
    }

    /// The end of the text: a last record without its newline counts; an open quote is suspicious.
    mutating func finish() {
        switch state {
        case .quoted: isSuspicious = true
        case .rowNotBegun: break
        case .fieldNotBegun:
            fieldStart = offset
            endField(at: offset)
            endRecord()
        case .unquoted, .quoteInQuoted:
            endField(at: offset)
            endRecord()
        }
        state = .rowNotBegun
    }

    /// A byte of the token field, as `Shard.hash` takes it: blanks around the token dropped.
    @inline(__always)
    private mutating func feed(_ byte: UInt8) {
        if byte == 0x20 || byte == 0x09 {
            if hashed { pendingBlanks = true }
            return
        }
        if pendingBlanks { isSuspicious = true }
        hash = (hash ^ UInt64(byte &- 0x41 < 26 ? byte | 0x20 : byte)) &* Shard.fnvPrime
        hashed = true
    }

    private mutating func endField(at end: Int) {
        // Quotes and blanks included: a field near the limit is left to libcsv, which knows its length.
        if end - fieldStart > CSVParser.maxFieldBytes { isSuspicious = true }
        field += 1
    }

    private mutating func endRecord() {
        if headerSeen {
            row += 1
            let owner = field == headerFields && hashed ? Int(hash % shardCount) : row % Int(shardCount)
            if owner == shardIndex { members.insert(row) }
        } else {
            headerSeen = true
            if field != headerFields { isSuspicious = true }
        }
        field = 0
        hash = Shard.fnvOffsetBasis
        hashed = false
        pendingBlanks = false
    }
}
