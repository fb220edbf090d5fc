import CCSV
#if canImport(Glibc)
import Glibc
#endif

/// The libcsv binding shared by CSVSource and Prescan: strict RFC 4180 quoting, header mapping by
/// name, physical line numbers for error messages, and row bytes collected into a batch.
/// Ordinary records take the fast path (`CSVFastSplitter`, about a tenth of libcsv's instructions);
/// libcsv parses the rest and stays the reference (`fastPath: false` is libcsv alone).
/// Owns its `csv_parser`; used by one thread.
///
/// Line numbers: an error names the physical line (LFs counted, those inside quoted fields too)
/// of the byte at fault, or of the opening quote of a field that never ends. LFs are counted once
/// per chunk, not per field: the line where a chunk starts is kept, and the line of a position in
/// the chunk is counted only when an error needs it.
final class CSVParser {
    static let maxFieldBytes = 65536
    /// A field this long is almost surely an unclosed quote swallowing the file: stop, bounded memory.
    static let hardFieldLimit = 16 * 1024 * 1024

    let path: String
    let keepsFields: Bool
    private let parser: UnsafeMutablePointer<csv_parser>

    @exclusivity(unchecked) private(set) var header: CSVHeader?
    /// `header`'s field count; -1 before the header.
    @exclusivity(unchecked) private var headerFieldCount = -1
    @exclusivity(unchecked) private var headerNames: [String] = []
    @exclusivity(unchecked) private var columnOfField: [Int] = []
    @exclusivity(unchecked) private(set) var error: InputFileError?

    @exclusivity(unchecked) private(set) var rowCount = 0
    /// Records the fast path split (the tests' proof that it ran).
    @exclusivity(unchecked) private(set) var fastRecords = 0
    /// 1-based line on which the current chunk starts: the LFs of every earlier chunk, counted.
    @exclusivity(unchecked) private var chunkStartLine = 1
    @exclusivity(unchecked) private var fieldIndex = 0
    @exclusivity(unchecked) private var rowProblem: CSVRowProblem?
    @exclusivity(unchecked) private var batch: CSVBatchBuilder
    /// Header names (lower case, trimmed) of columns a payload template reads besides the known
    /// ones: kept in the batch's slots after theirs.
    private let extraColumns: [String]

    /// A column every data row must fill (the prescan's topic check; only without `keepsFields`).
    var requiredColumn: CSVColumn?
    private var requiredFieldIndex = -1
    private var requiredSeen = false
    /// The first data row whose required column is empty or absent.
    private(set) var firstRowMissingRequired: Int?

    /// The fast path; nil when this parser is libcsv alone (the reference the tests compare with).
    private let splitter: CSVFastSplitter?

    /// What the header's names mean (a device campaign's or a broadcast's).
    private let names: CSVColumnNames

    init(path: String, keepsFields: Bool, extraColumns: [String] = [], fastPath: Bool = true,
         names: CSVColumnNames = .deviceCampaign) {
        self.path = path
        self.names = names
        self.keepsFields = keepsFields
        splitter = fastPath ? CSVFastSplitter() : nil
        self.extraColumns = extraColumns
        batch = CSVBatchBuilder(extraColumns: extraColumns.count)
        parser = .allocate(capacity: 1)
        csv_init(parser, apnsbulk_csv_strict | apnsbulk_csv_strict_fini)
        // libcsv grows a field's buffer by this much per realloc (128 bytes by default): a field
        // up to `hardFieldLimit` took 131,072 reallocs, quadratic where realloc copies (ASan's
        // does, and so `make sanitize` never finished the unclosed-quote test).
        csv_set_blk_size(parser, 64 * 1024)
    }

    deinit {
        csv_free(parser)
        parser.deallocate()
    }

    /// Parses one chunk; rows completed by it go into the pending batch.
    func parse(_ chunk: [UInt8]) throws(InputFileError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Counted before a throw can leave the closure: its error type would be erased.
        var binaryLine: Int?
        var malformedLine: Int?
        chunk.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            // The rows before a NUL are parsed, so that a reader without the prescan can still
            // send them; the NUL's own row stays open.
            let clean = memchr(base, 0, bytes.count).map { UnsafeRawPointer($0) - base } ?? bytes.count
            // libcsv stops at the offending byte: the LFs before it, those of the open field
            // included, give its line.
            let consumed = parseRecords(base, count: clean, context: context)
            if consumed != clean {
                malformedLine = chunkStartLine + Self.lines(in: UnsafeRawBufferPointer(start: base, count: consumed))
                return
            }
            if clean != bytes.count {
                binaryLine = chunkStartLine + Self.lines(in: UnsafeRawBufferPointer(start: base, count: clean))
                return
            }
            chunkStartLine += Self.lines(in: bytes)
        }
        if let error { throw error }
        if let malformedLine { throw .malformedQuoting(path: path, line: malformedLine) }
        if let binaryLine { throw .binary(path: path, line: binaryLine) }
        if parser.pointee.entry_pos > Self.hardFieldLimit {
            throw .fieldTooLong(path: path, line: lineOfOpenField(), limit: Self.hardFieldLimit)
        }
    }

    /// Parses `base[0..<count]` as libcsv would, and returns how much of it libcsv would take (all
    /// of it but after an error). Records go through the fast path while libcsv sits between
    /// records (`pstate` 0, its state after `csv_init`); a record the splitter leaves, and one that
    /// libcsv has begun, go to libcsv a line at a time until it is between records again.
    private func parseRecords(_ base: UnsafeRawPointer, count: Int, context: UnsafeMutableRawPointer) -> Int {
        guard let splitter else { return csv_parse(parser, base, count, onField, onRow, context) }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var position = 0
        while position < count {
            if parser.pointee.pstate == 0 {
                position = CSVStateMachine.skipBetweenRecords(bytes, from: position, count: count)
                guard position < count else { break }
                if let next = splitter.split(base, from: position, count: count) {
                    if keepsFields && headerFieldCount >= 0 {
                        keepSplitRecord(splitter, in: base, bytes: next &- position)
                    } else {
                        let spans = splitter.spans
                        for index in 0..<splitter.fieldCount {
                            let (start, length) = splitter.bytes(of: spans[index], in: base)
                            field(start, length)
                        }
                        rowEnded()
                    }
                    fastRecords &+= 1
                    position = next
                    continue
                }
            }
            let line = memchr(base + position, 10, count - position).map { UnsafeRawPointer($0) - base + 1 } ?? count
            let consumed = csv_parse(parser, base + position, line - position, onField, onRow, context)
            if consumed != line - position { return position + consumed }
            position = line
        }
        return count
    }

    /// Ends the input: the last row may lack its newline; an open quote is an error.
    func finish() throws(InputFileError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if csv_fini(parser, onField, onRow, context) != 0 {
            throw .unclosedQuote(path: path, line: lineOfOpenField())
        }
        if let error { throw error }
    }

    /// Hands out the rows completed so far; a row still in progress moves to the next batch.
    func takeBatch() -> CSVBatch { batch.takeBatch() }

    var pendingRows: Int { batch.rows }

    fileprivate func field(_ bytes: UnsafeRawPointer?, _ count: Int) {
        defer { fieldIndex += 1 }
        guard header != nil else {
            let raw = UnsafeRawBufferPointer(start: bytes, count: count)
            headerNames.append(String(decoding: raw, as: UTF8.self))
            // A name that is not UTF-8 matches no column: say that, not that the column is missing.
            // The reading parser judges names; the counting one (prescan) only the CSV structure,
            // as CSVRecordCounter does, and CSVSource reads the header before anything is sent.
            if keepsFields && error == nil && String(validating: raw, as: UTF8.self) == nil {
                error = .headerNotUTF8(path: path, column: fieldIndex + 1, name: headerNames[fieldIndex])
            }
            return
        }
        guard keepsFields else {
            if fieldIndex == requiredFieldIndex && count > 0 { requiredSeen = true }
            return
        }
        let column = fieldIndex < columnOfField.count ? columnOfField[fieldIndex] : -1
        // A column not in use (unknown, or past the header's end) keeps no bytes, but DESIGN's
        // 64 KiB limit holds for every field: only its length is looked at.
        guard column >= 0 else {
            if count > Self.maxFieldBytes { unusedFieldTooLarge(bytes: count) }
            return
        }
        if count > Self.maxFieldBytes {
            if rowProblem == nil, let known = CSVColumn(rawValue: column) {
                rowProblem = .fieldTooLarge(column: known, bytes: count)
            } else {
                unusedFieldTooLarge(bytes: count)
            }
            return
        }
        batch.append(bytes, count: count, column: column)
    }

    /// Out of line, so that the per-field path stays one comparison.
    @inline(never)
    private func unusedFieldTooLarge(bytes: Int) {
        if rowProblem == nil { rowProblem = .unusedFieldTooLarge(field: fieldIndex + 1, bytes: bytes) }
    }

    /// A data row the fast path split, kept as `field` for each of its fields and `rowEnded` would
    /// keep it, in one call: no field of a split record is over the size limit (the splitter leaves
    /// such a record to libcsv), so the field count is the only problem it can have.
    @inline(__always)
    private func keepSplitRecord(_ splitter: CSVFastSplitter, in base: UnsafeRawPointer, bytes: Int) {
        rowCount &+= 1
        let fields = splitter.fieldCount
        let problem: CSVRowProblem? = fields == headerFieldCount ? nil
            : .fieldCount(found: fields, expected: headerFieldCount)
        batch.appendRecord(splitter, in: base, bytes: bytes, columns: columnOfField, number: rowCount, problem: problem)
    }

    fileprivate func rowEnded() {
        guard fieldIndex > 0 else { return }  // no fields, no row (libcsv skips blank lines itself)
        if header == nil {
            acceptHeader()
        } else {
            rowCount += 1
            if keepsFields {
                keepRow()
            } else if requiredFieldIndex >= 0 {
                if !requiredSeen && firstRowMissingRequired == nil { firstRowMissingRequired = rowCount }
                requiredSeen = false
            }
        }
        fieldIndex = 0
        rowProblem = nil
    }

    private func keepRow() {
        if rowProblem == nil, let header, fieldIndex != header.fieldCount {
            rowProblem = .fieldCount(found: fieldIndex, expected: header.fieldCount)
        }
        batch.endRow(number: rowCount, problem: rowProblem)
    }

    private func acceptHeader() {
        var names = headerNames
        // Spreadsheet exports often start with a UTF-8 byte order mark.
        if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0] = String(first.dropFirst()) }
        var columns = Set<CSVColumn>()
        columnOfField = names.map { name in
            guard let column = self.names.column(named: name.trimmingSpaces) else {
                return extraColumns.firstIndex(of: name.trimmingSpaces.lowercased()).map { CSVColumn.allCases.count + $0 } ?? -1
            }
            if !columns.insert(column).inserted, error == nil { error = .duplicateColumn(path: path, name: self.names.headerName(column)) }
            return column.rawValue
        }
        if !columns.contains(.deviceToken), error == nil {
            error = self.names == .broadcast ? .missingChannelIDColumn(path: path, found: names)
                : .missingDeviceTokenColumn(path: path, found: names)
        }
        header = CSVHeader(names: names, columns: columns)
        headerFieldCount = names.count
        if let requiredColumn { requiredFieldIndex = columnOfField.firstIndex(of: requiredColumn.rawValue) ?? -1 }
    }

    /// The line the parser has reached: where the next chunk starts.
    var lineReached: Int { chunkStartLine }

    /// The line of the opening quote of the field libcsv holds open, once a whole chunk is
    /// counted: its LFs (kept in the field, unescaping drops none) are the ones after that quote.
    private func lineOfOpenField() -> Int {
        let state = parser.pointee
        guard let buffer = state.entry_buf else { return chunkStartLine }
        return chunkStartLine - Self.lines(in: UnsafeRawBufferPointer(start: buffer, count: state.entry_pos))
    }

    /// LFs in `bytes`. (A SIMD count, 64 bytes a step, measured no cheaper than memchr on
    /// campaign rows: memchr steps 32 bytes at a time to the next LF, about one per row.)
    static func lines(in bytes: UnsafeRawBufferPointer) -> Int {
        guard var cursor = bytes.baseAddress else { return 0 }
        var remaining = bytes.count
        var found = 0
        while remaining > 0, let hit = memchr(cursor, 10, remaining) {
            found += 1
            let next = UnsafeRawPointer(hit) + 1
            remaining -= next - cursor
            cursor = next
        }
        return found
    }
}

// libcsv calls back only from inside `csv_parse`/`csv_fini`, which the parser itself calls: it is
// alive throughout, so the callbacks use it without a retain and release each (three per row).
private let onField: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Void = { bytes, count, context in
    guard let context else { return }
    Unmanaged<CSVParser>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.field(bytes.map { UnsafeRawPointer($0) }, count) }
}

private let onRow: @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void = { _, context in
    guard let context else { return }
    Unmanaged<CSVParser>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.rowEnded() }
}

extension String {
    var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
