import APNs

/// `CSVParser`'s fast path: splits one record of a read chunk into its fields 8 bytes at a time
/// (SWAR), where libcsv takes a state-machine step and a buffer check per byte. It reproduces
/// what strict libcsv, with our options, makes of an ordinary record: leading and trailing spaces
/// and tabs of an unquoted field dropped, a quoted field's quotes removed and its `""` unescaped,
/// spaces and tabs after a closing quote ignored, CR and LF (and CR LF) ending a record, a quoted
/// field free to span lines.
///
/// Everything else it leaves to libcsv, which stays the reference (`CSVFastPathTests`, the
/// `FuzzCSVFast` fuzzer): a record that strict libcsv refuses (a quote in an unquoted field, text
/// after a closing quote), a field over 64 KiB (its row's problem is libcsv's to measure), and a
/// record the chunk cuts off, so that libcsv's buffer holds every record that spans chunks and the
/// parser's open-field checks see the state they always saw. NULs never reach it (`CSVParser`
/// cuts the chunk before one). It says so by returning nil, having changed nothing the caller
/// sees: the record is then libcsv's from its first byte.
///
/// Owns its two buffers (freed in deinit); used by the parser's one thread.
final class CSVFastSplitter {
    /// One field of the record split last: its bytes between the quotes (or trimmed), and how many
    /// `""` they hold (each stands for one quote).
    struct Span {
        var start: Int
        var end: Int
        var escapes: Int
    }

    /// The fields of the record split last, `fieldCount` of them.
    private(set) var spans: UnsafeMutablePointer<Span>
    private(set) var fieldCount = 0
    private var spanCapacity = 16
    /// A field with `""` unescaped: at most `CSVParser.maxFieldBytes`, plus a word of slack for
    /// the copy's last 8-byte store.
    private let unescaped: UnsafeMutableRawPointer

    init() {
        spans = .allocate(capacity: spanCapacity)
        unescaped = .allocate(byteCount: CSVParser.maxFieldBytes + 8, alignment: 8)
    }

    deinit {
        spans.deallocate()
        unescaped.deallocate()
    }

    /// Skips what libcsv skips between records: blank lines, and spaces and tabs before a
    /// record's first field (a line of only those is blank too). Returns the first other offset.
    @inline(__always)
    static func skipBlanks(_ base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        var index = start
        while index < count {
            let byte = base[index]
            guard byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D else { break }
            index &+= 1
        }
        return index
    }

    /// Splits the record starting at `start` (not a blank, see `skipBlanks`) into `spans`, and
    /// returns the offset after its CR or LF; nil leaves the record to libcsv.
    func split(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int? {
        let base = raw.assumingMemoryBound(to: UInt8.self)
        var index = start
        fieldCount = 0
        while true {
            while index < count, base[index] == 0x20 || base[index] == 0x09 { index &+= 1 }
            guard index < count else { return nil }
            let first = base[index]
            var next: Int
            if first == 0x22 {
                var escapes = 0
                var quote = index &+ 1
                while true {
                    quote = Self.nextQuote(raw, from: quote, count: count, escapes: &escapes)
                    // The byte after a quote tells an escape from the field's end.
                    guard quote &+ 1 < count else { return nil }
                    guard base[quote &+ 1] == 0x22 else { break }
                    escapes &+= 1
                    quote &+= 2
                }
                guard quote &- index &- 1 <= CSVParser.maxFieldBytes else { return nil }
                append(Span(start: index &+ 1, end: quote, escapes: escapes))
                next = quote &+ 1
                while next < count, base[next] == 0x20 || base[next] == 0x09 { next &+= 1 }
                guard next < count else { return nil }
            } else if first == 0x2C || first == 0x0A || first == 0x0D {
                append(Span(start: index, end: index, escapes: 0))
                next = index
            } else {
                next = Self.unquotedEnd(raw, from: index &+ 1, count: count)
                guard next < count else { return nil }
                var end = next
                while base[end &- 1] == 0x20 || base[end &- 1] == 0x09 { end &-= 1 }
                guard end &- index <= CSVParser.maxFieldBytes else { return nil }
                append(Span(start: index, end: end, escapes: 0))
            }
            switch base[next] {
            case 0x2C: index = next &+ 1
            case 0x0A, 0x0D: return next &+ 1
            default: return nil  // text after a closing quote: strict libcsv's error to report
            }
        }
    }

    /// The bytes of `span`, `""` unescaped: in the chunk itself when it has none, else copied.
    @inline(__always)
    func bytes(of span: Span, in raw: UnsafeRawPointer) -> (UnsafeRawPointer, Int) {
        guard span.escapes > 0 else { return (raw + span.start, span.end &- span.start) }
        return (UnsafeRawPointer(unescaped), unescape(raw, span))
    }

    /// Copies the span without the second quote of each pair, 8 bytes a step: every quote in a
    /// split quoted field is the first of a `""`, so after one the copy skips the next byte.
    private func unescape(_ raw: UnsafeRawPointer, _ span: Span) -> Int {
        var source = span.start
        var target = 0
        while span.end &- source >= 8 {
            let word = SWAR.load(raw + source)
            (unescaped + target).storeBytes(of: word.littleEndian, as: UInt64.self)
            let quotes = SWAR.bytesEqual(word, 0x22)
            guard quotes != 0 else {
                source &+= 8
                target &+= 8
                continue
            }
            let at = quotes.trailingZeroBitCount &>> 3
            source &+= at &+ 2
            target &+= at &+ 1
        }
        while source < span.end {
            let byte = raw.load(fromByteOffset: source, as: UInt8.self)
            unescaped.storeBytes(of: byte, toByteOffset: target, as: UInt8.self)
            target &+= 1
            source &+= byte == 0x22 ? 2 : 1
        }
        return target
    }

    @inline(__always)
    private func append(_ span: Span) {
        if fieldCount == spanCapacity { growSpans() }
        spans[fieldCount] = span
        fieldCount &+= 1
    }

    @inline(never)
    private func growSpans() {
        let larger = UnsafeMutablePointer<Span>.allocate(capacity: 2 * spanCapacity)
        larger.moveInitialize(from: spans, count: fieldCount)
        spans.deallocate()
        spans = larger
        spanCapacity *= 2
    }

    /// In a quoted field, the offset of the first quote that is not one of a `""` lying within one
    /// word (those are counted into `escapes`), or `count`.
    @inline(__always)
    static func nextQuote(_ raw: UnsafeRawPointer, from start: Int, count: Int, escapes: inout Int) -> Int {
        var index = start
        while count &- index >= 8 {
            var quotes = SWAR.bytesEqual(SWAR.load(raw + index), 0x22)
            while quotes != 0 {
                let at = quotes.trailingZeroBitCount &>> 3
                guard at < 7, quotes & (0x80 &<< (at &* 8 &+ 8)) != 0 else { return index &+ at }
                escapes &+= 1
                quotes &= quotes &- 1
                quotes &= quotes &- 1
            }
            index &+= 8
        }
        while index < count, raw.load(fromByteOffset: index, as: UInt8.self) != 0x22 { index &+= 1 }
        return index
    }

    /// In an unquoted field, the offset of the first comma, CR, LF or quote, or `count`. A word
    /// with no byte below `-` (hex digits, letters, digits) holds none of them.
    @inline(__always)
    static func unquotedEnd(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int {
        var index = start
        while true {
            index = CSVRecordCounter.skipUnquoted(raw, from: index, count: count)
            guard index < count else { return count }
            switch raw.load(fromByteOffset: index, as: UInt8.self) {
            case 0x2C, 0x0A, 0x0D, 0x22: return index
            default: index &+= 1
            }
        }
    }
}
