#if canImport(Glibc)
import Glibc
#endif

/// The CSV record grammar as strict libcsv reads it with our options (RFC 4180), written once:
/// fields separated by commas; CR, LF or CR LF ending a record; spaces and tabs around an unquoted
/// field and after a closing quote dropped; a quoted field free to hold commas and line breaks, a
/// `""` in it standing for one quote; blank lines no records. libcsv refuses a quote in an unquoted
/// field and text after a closing quote, and our parser a NUL: the machine says `refused` there.
/// A UTF-8 BOM is three bytes of the first field, as libcsv sees it (`CSVParser` drops it from the
/// header's first name).
///
/// libcsv (`CSVParser` with `fastPath: false`) stays the reference and the fallback: every user of
/// the machine leaves what it refuses, or what it cannot measure exactly, to libcsv. Its users:
/// `CSVFastSplitter` steps it at the bytes that end a field (one record of a chunk, all of it in
/// view); `Stream.scan` drives it over a stream of chunks for a `Listener`: `CSVRecordCounter` (and
/// through it `DuplicateTokensScan`, the prescan's) and `ShardRecordScanner`.
///
/// Cost: the prescan and the reader run it over every byte of a campaign, so inside a field it
/// does not step a byte at a time. In a quoted field it looks only for a quote that may end it (32
/// bytes a step on x86-64: two SSE2 blocks, their `""` pairs masked off, since a JSON payload holds
/// one every 15 bytes or so; the splitter's copy likewise goes past a `""` in one flat loop, where
/// leaving an inner block loop at each cost ~35 instructions an escape); in an unquoted one for a
/// byte below `-` (a 64-digit token is two steps). `step` decides only the bytes that stopped a
/// skip, about six a campaign row. A listener's calls are specialized and inlined into the loop,
/// and the counter holds the duplicate scan unretained (a stored optional bound at each use cost a
/// retain and a release a row). Callgrind per row (200-byte payloads): the prescan's count with its
/// duplicate capture 659 instructions (634 written apart, before the machine), the reader's split
/// 583 (515): stepping the machine at a field's end costs ~11 instructions where the
/// hand-written splitter tested that byte in place.
struct CSVStateMachine {
    enum State: UInt8 {
        /// Between records: spaces, tabs and blank lines are skipped.
        case recordNotBegun
        /// After a comma: spaces and tabs before the field are skipped.
        case fieldNotBegun
        case unquoted
        case quoted
        /// A quote in a quoted field: its end, or the first half of `""`.
        case quoteInQuoted
        /// Spaces or tabs after a closing quote.
        case afterClosingQuote
        /// Something strict libcsv refuses (or a NUL, or a field over a listener's limit): the
        /// machine stops here.
        case refused
    }

    /// How the field that just ended was written.
    enum FieldKind {
        /// No bytes (two commas, a comma and a line break): an empty field.
        case empty
        /// Its bytes as written, spaces and tabs after it included (the caller trims them).
        case unquoted
        /// From its opening quote to the comma or line break after it.
        case quoted
    }

    /// What a byte meant.
    enum Event {
        /// Nothing for a caller: a blank between fields or records, a quote that may end a field.
        case none
        /// A byte of the field's text (a quoted field's quotes excepted).
        case fieldByte
        /// A field begins at this byte (its opening quote, or its first byte, then a field byte too).
        case fieldBegins(quoted: Bool)
        /// A comma ended a field.
        case fieldEnds(FieldKind)
        /// A CR or LF ended a field, and its record.
        case recordEnds(FieldKind)
        /// The second quote of a `""`.
        case escapedQuote
        case refused
    }

    static let quote: UInt8 = 0x22
    static let comma: UInt8 = 0x2C

    private(set) var state = State.recordNotBegun

    @inline(__always)
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    @inline(__always)
    static func isLineBreak(_ byte: UInt8) -> Bool { byte == 0x0A || byte == 0x0D }

    /// The transition on one byte: the whole grammar.
    @inline(__always)
    mutating func step(_ byte: UInt8) -> Event {
        switch state {
        case .quoted:
            guard byte == Self.quote else { return .fieldByte }
            state = .quoteInQuoted
            return .none
        case .unquoted:
            if let end = delimiter(byte, ending: .unquoted) { return end }
            return byte == Self.quote ? refuse() : .fieldByte
        case .recordNotBegun, .fieldNotBegun:
            // Blank lines are no records: a line break ends one only after a comma.
            if Self.isBlank(byte) || state == .recordNotBegun && Self.isLineBreak(byte) { return .none }
            if byte == Self.quote {
                state = .quoted
                return .fieldBegins(quoted: true)
            }
            if let end = delimiter(byte, ending: .empty) { return end }
            state = .unquoted
            return .fieldBegins(quoted: false)
        case .quoteInQuoted, .afterClosingQuote:
            if let end = delimiter(byte, ending: .quoted) { return end }
            if Self.isBlank(byte) {
                state = .afterClosingQuote
                return .none
            }
            guard byte == Self.quote, state == .quoteInQuoted else { return refuse() }
            state = .quoted
            return .escapedQuote
        case .refused:
            return .refused
        }
    }

    /// A comma or a line break ends the field (`kind`), a line break its record too; nil for any
    /// other byte.
    @inline(__always)
    private mutating func delimiter(_ byte: UInt8, ending kind: FieldKind) -> Event? {
        if byte == Self.comma {
            state = .fieldNotBegun
            return .fieldEnds(kind)
        }
        guard Self.isLineBreak(byte) else { return nil }
        state = .recordNotBegun
        return .recordEnds(kind)
    }

    @inline(__always)
    private mutating func refuse() -> Event {
        state = .refused
        return .refused
    }

    /// Whether the machine is inside a field (its bytes may go on in the next chunk).
    var isInField: Bool {
        switch state {
        case .unquoted, .quoted, .quoteInQuoted, .afterClosingQuote: true
        case .recordNotBegun, .fieldNotBegun, .refused: false
        }
    }

    /// Skips what lies between records: blank lines, and spaces and tabs before a record's first
    /// field (a line of only those is blank too). Returns the first other offset.
    @inline(__always)
    static func skipBetweenRecords(_ base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        var index = start
        while index < count, isBlank(base[index]) || isLineBreak(base[index]) { index &+= 1 }
        return index
    }
}

// MARK: - Over a stream of chunks

extension CSVStateMachine {
    /// What a stream scan tells: where fields begin and end, where records end. The machine is
    /// specialized for each listener, so that its calls cost what their bodies do.
    protocol Listener {
        /// Whether some fields are read a byte at a time (`fieldBegins` says which); when false
        /// (a constant), every field is skipped a block at a time.
        static var readsFieldBytes: Bool { get }
        /// A field begins at `index` of the chunk (its opening quote, when `quoted`). Returns
        /// whether its bytes go to `fieldByte` one at a time (asked only with `readsFieldBytes`).
        mutating func fieldBegins(at index: Int, quoted: Bool) -> Bool
        /// A byte of a field read a byte at a time.
        mutating func fieldByte(_ byte: UInt8)
        /// The second quote of a `""` in a field read a byte at a time.
        mutating func escapedQuote()
        /// A field ended before `index` of `base` (nil at the end of the input), `length` bytes
        /// from where it began (quotes and blanks included; 0 for an empty field).
        mutating func fieldEnds(_ kind: FieldKind, at index: Int, length: Int, in base: UnsafePointer<UInt8>?)
        /// The record of the field that ended last ended.
        mutating func recordEnds()
        /// The chunk ends (`count` bytes), inside a field or not.
        mutating func chunkEnds(count: Int, in base: UnsafePointer<UInt8>, inField: Bool)
    }

    /// Where a stream scan is: the machine and what it needs across chunks.
    struct Stream {
        private(set) var machine = CSVStateMachine()
        /// A field open at a chunk's end longer than this (quotes and blanks included) is refused.
        let openFieldLimit: Int
        /// Bytes of the chunks before this one.
        private var offset = 0
        /// Where the open field began (its opening quote), in the whole input.
        private var fieldStart = 0
        /// The open field is read a byte at a time.
        private var readsField = false

        init(openFieldLimit: Int) {
            self.openFieldLimit = openFieldLimit
        }

        var isRefused: Bool { machine.state == .refused }
        var isBetweenRecords: Bool { machine.state == .recordNotBegun }

        /// Scans one chunk (a NUL anywhere in it is refused), telling `listener`; stops where the
        /// machine refuses.
        @inline(__always)
        mutating func scan<L: Listener>(_ bytes: UnsafeRawBufferPointer, _ listener: inout L) {
            guard !isRefused, let raw = bytes.baseAddress else { return }
            let count = bytes.count
            if memchr(raw, 0, count) != nil {
                _ = machine.refuse()
                return
            }
            let base = raw.assumingMemoryBound(to: UInt8.self)
            var index = 0
            scanning: while index < count {
                if !(L.readsFieldBytes && readsField) {
                    switch machine.state {
                    case .quoted:
                        index = CSVStateMachine.skipQuoted(raw, from: index, count: count)
                        guard index < count else { break scanning }
                    case .unquoted:
                        index = CSVStateMachine.skipUnquoted(raw, from: index, count: count)
                        guard index < count else { break scanning }
                    default:
                        break
                    }
                }
                let byte = base[index]
                switch machine.step(byte) {
                case .none:
                    break
                case .fieldByte:
                    if L.readsFieldBytes && readsField { listener.fieldByte(byte) }
                case .fieldBegins(let quoted):
                    fieldStart = offset &+ index
                    if L.readsFieldBytes {
                        readsField = listener.fieldBegins(at: index, quoted: quoted)
                        if readsField && !quoted { listener.fieldByte(byte) }
                    } else {
                        _ = listener.fieldBegins(at: index, quoted: quoted)
                    }
                case .fieldEnds(let kind):
                    listener.fieldEnds(kind, at: index, length: length(kind, endingAt: offset &+ index), in: base)
                case .recordEnds(let kind):
                    listener.fieldEnds(kind, at: index, length: length(kind, endingAt: offset &+ index), in: base)
                    listener.recordEnds()
                case .escapedQuote:
                    if L.readsFieldBytes && readsField { listener.escapedQuote() }
                case .refused:
                    return
                }
                index &+= 1
            }
            let inField = machine.isInField
            listener.chunkEnds(count: count, in: base, inField: inField)
            offset &+= count
            if inField && offset &- fieldStart > openFieldLimit { _ = machine.refuse() }
        }

        /// The end of the input: a last record without its line break counts; an open quote is refused.
        mutating func finish<L: Listener>(_ listener: inout L) {
            switch machine.state {
            case .quoted:
                _ = machine.refuse()
                return
            case .recordNotBegun, .refused:
                return
            case .fieldNotBegun:
                listener.fieldEnds(.empty, at: 0, length: 0, in: nil)
            case .unquoted:
                listener.fieldEnds(.unquoted, at: 0, length: offset &- fieldStart, in: nil)
            case .quoteInQuoted, .afterClosingQuote:
                listener.fieldEnds(.quoted, at: 0, length: offset &- fieldStart, in: nil)
            }
            listener.recordEnds()
            machine.state = .recordNotBegun
        }

        @inline(__always)
        private func length(_ kind: FieldKind, endingAt end: Int) -> Int {
            if case .empty = kind { 0 } else { end &- fieldStart }
        }
    }
}

extension CSVStateMachine.Listener {
    static var readsFieldBytes: Bool { false }
    @inline(__always) mutating func fieldByte(_ byte: UInt8) {}
    @inline(__always) mutating func escapedQuote() {}
    @inline(__always) mutating func chunkEnds(count: Int, in base: UnsafePointer<UInt8>, inField: Bool) {}
}
