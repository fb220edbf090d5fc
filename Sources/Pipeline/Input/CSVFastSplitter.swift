import ByteScan
import APNs

/// `CSVParser`'s fast path: splits one record of a read chunk into its fields, stepping
/// `CSVStateMachine` only at the bytes that may end one (a quoted field is copied 16 bytes at a
/// time, `ByteBlocks`: SSE2 on x86-64, SWAR elsewhere), where libcsv takes a state-machine step and
/// a buffer check per byte. It makes of an ordinary record what strict libcsv, with our options,
/// makes of it: leading and trailing spaces and tabs of an unquoted field dropped, a quoted
/// field's quotes removed and its `""` unescaped.
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
    /// One field of the record split last: where its bytes lie (between the quotes, or trimmed),
    /// in the chunk, or in `unescaped` when it held a `""` (each stands for one quote there).
    struct Span {
        var start: Int
        var end: Int
        var isUnescaped: Bool
    }

    /// The fields of the record split last, `fieldCount` of them.
    @exclusivity(unchecked) private(set) var spans: UnsafeMutablePointer<Span>
    @exclusivity(unchecked) private(set) var fieldCount = 0
    @exclusivity(unchecked) private var spanCapacity = 16
    /// The record's quoted fields copied as they are scanned, `""` unescaped; those that held one
    /// are kept (`unescapedUsed` bytes), the others are read from the chunk.
    @exclusivity(unchecked) private var unescaped: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var unescapedCapacity = 4096
    @exclusivity(unchecked) private var unescapedUsed = 0

    init() {
        spans = .allocate(capacity: spanCapacity)
        unescaped = .allocate(byteCount: unescapedCapacity, alignment: 8)
    }

    deinit {
        spans.deallocate()
        unescaped.deallocate()
    }

    /// Splits the record starting at `start` (not a blank, see
    /// `CSVStateMachine.skipBetweenRecords`) into `spans`, and returns the offset after its CR or
    /// LF; nil leaves the record to libcsv.
    func split(_ raw: UnsafeRawPointer, from start: Int, count: Int) -> Int? {
        split(raw, from: start, count: count, using: NativeBlocks.self)
    }

    /// `split(_:from:count:)` with the given block tests for quoted fields (the tests run both kinds).
    /// The machine steps on each byte that may end a field; the bytes between are skipped (an
    /// unquoted field's) or copied (a quoted field's) a block at a time.
    @inline(__always)
    func split<Blocks: ByteBlocks>(_ raw: UnsafeRawPointer, from start: Int, count: Int, using _: Blocks.Type) -> Int? {
        let base = raw.assumingMemoryBound(to: UInt8.self)
        var machine = CSVStateMachine()
        var index = start
        var fieldStart = start
        var quoted = Span(start: 0, end: 0, isUnescaped: false)
        fieldCount = 0
        unescapedUsed = 0
        while true {
            switch machine.state {
            case .unquoted:
                index = CSVStateMachine.skipUnquoted(raw, from: index, count: count)
            case .quoted:
                guard let span = scanQuoted(raw, from: index, count: count, using: Blocks.self) else { return nil }
                quoted = span.field
                index = span.closingQuote
            default:
                break
            }
            guard index < count else { return nil }
            switch machine.step(base[index]) {
            case .none, .fieldByte, .escapedQuote:
                break
            case .fieldBegins:
                fieldStart = index
            case .fieldEnds(let kind):
                guard appendField(kind, from: fieldStart, to: index, quoted: quoted, base) else { return nil }
            case .recordEnds(let kind):
                guard appendField(kind, from: fieldStart, to: index, quoted: quoted, base) else { return nil }
                return index &+ 1
            case .refused:
                return nil  // a quote in an unquoted field, text after a closing quote: libcsv's error
            }
            index &+= 1
        }
    }

    /// Keeps the field that ended at `end`: an unquoted one from `start` (its first byte) with its
    /// trailing blanks dropped, a quoted one as `scanQuoted` found it. False for an
    /// unquoted field over the size limit.
    @inline(__always)
    private func appendField(_ kind: CSVStateMachine.FieldKind, from start: Int, to end: Int, quoted: Span,
                             _ base: UnsafePointer<UInt8>) -> Bool {
        switch kind {
        case .empty:
            append(Span(start: end, end: end, isUnescaped: false))
        case .quoted:
            append(quoted)
        case .unquoted:
            var last = end
            while CSVStateMachine.isBlank(base[last &- 1]) { last &-= 1 }
            guard last &- start <= CSVParser.maxFieldBytes else { return false }
            append(Span(start: start, end: last, isUnescaped: false))
        }
        return true
    }

    /// The bytes of `span`, `""` unescaped.
    @inline(__always)
    func bytes(of span: Span, in raw: UnsafeRawPointer) -> (UnsafeRawPointer, Int) {
        ((span.isUnescaped ? UnsafeRawPointer(unescaped) : raw) + span.start, span.end &- span.start)
    }

    /// Scans a quoted field from `start` (after its opening quote) to its closing quote, copying it
    /// a block (16 bytes) a step into `unescaped` as it goes, each `""` as one quote: a block is
    /// stored whole, and after a quote the copy goes on from the byte after it. Nil when the chunk
    /// ends first, or the field is over the size limit. One flat loop, a block or a quote a step
    /// (`CSVStateMachine` says why).
    @inline(__always)
    private func scanQuoted<Blocks: ByteBlocks>(_ raw: UnsafeRawPointer, from start: Int, count: Int,
                                                using _: Blocks.Type) -> (field: Span, closingQuote: Int)? {
        // Room for the rest of the chunk and a last whole block: no check per step.
        if unescapedCapacity &- unescapedUsed < count &- start &+ 16 { growUnescaped(toHold: count &- start &+ 16) }
        let target = unescaped
        // Byte `source` of the chunk is copied to `target + source + shift`: one less per `""`.
        let noShift = unescapedUsed &- start
        var shift = noShift
        let lastBlock = count &- 16
        var source = start
        while true {
            if source <= lastBlock {
                let block = Blocks.load(raw + source)
                Blocks.store(block, to: target + (source &+ shift))
                let quotes = Blocks.equal(block, 0x22)
                if Blocks.isEmpty(quotes) {
                    source &+= 16
                    continue
                }
                source &+= Blocks.first(quotes)
            } else {
                while source < count {
                    let byte = raw.load(fromByteOffset: source, as: UInt8.self)
                    target.storeBytes(of: byte, toByteOffset: source &+ shift, as: UInt8.self)
                    if byte == 0x22 { break }
                    source &+= 1
                }
            }
            // At a quote (stored already): the byte after it tells an escape from the field's end.
            guard source &+ 1 < count else { return nil }
            guard raw.load(fromByteOffset: source &+ 1, as: UInt8.self) == 0x22 else { break }
            source &+= 2
            shift &-= 1
        }
        guard source &- start <= CSVParser.maxFieldBytes else { return nil }
        guard shift != noShift else { return (Span(start: start, end: source, isUnescaped: false), source) }
        let copied = source &+ shift
        let field = Span(start: unescapedUsed, end: copied, isUnescaped: true)
        unescapedUsed = copied
        return (field, source)
    }

    @inline(never)
    private func growUnescaped(toHold extra: Int) {
        let capacity = max(2 * unescapedCapacity, unescapedUsed + extra)
        let larger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        larger.copyMemory(from: unescaped, byteCount: unescapedUsed)
        unescaped.deallocate()
        unescaped = larger
        unescapedCapacity = capacity
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
}
