import CCSV
#if canImport(Glibc)
import Glibc
#endif

/// The libcsv binding shared by CSVSource and Prescan: strict RFC 4180 quoting, header mapping by
/// name, physical line tracking for error messages, and row bytes collected into a batch.
/// Owns its `csv_parser`; used by one thread.
final class CSVParser {
    static let maxFieldBytes = 65536
    /// A field this long is almost surely an unclosed quote swallowing the file: stop, bounded memory.
    static let hardFieldLimit = 16 * 1024 * 1024

    let path: String
    let keepsFields: Bool
    private let parser: UnsafeMutablePointer<csv_parser>

    private(set) var header: CSVHeader?
    private var headerNames: [String] = []
    private var columnOfField: [Int] = []
    private(set) var error: InputFileError?

    private(set) var rowCount = 0
    /// 1-based line the parser is on (LF counted, including LFs inside quoted fields).
    private(set) var line = 1
    private var fieldIndex = 0
    private var rowProblem: CSVRowProblem?
    private var batch = CSVBatchBuilder()

    init(path: String, keepsFields: Bool) {
        self.path = path
        self.keepsFields = keepsFields
        parser = .allocate(capacity: 1)
        // REPALL_NL: blank lines reach the row callback too, so line numbers stay exact.
        csv_init(parser, apnsbulk_csv_strict | apnsbulk_csv_strict_fini | UInt8(CSV_REPALL_NL))
    }

    deinit {
        csv_free(parser)
        parser.deallocate()
    }

    /// Parses one chunk; rows completed by it go into the pending batch.
    func parse(_ chunk: [UInt8]) throws(InputFileError) {
        if chunk.withUnsafeBytes({ memchr($0.baseAddress!, 0, $0.count) }) != nil {
            throw .binary(path: path, line: line + lines(in: chunk, upTo: chunk.firstIndex(of: 0) ?? 0))
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let consumed = chunk.withUnsafeBytes { csv_parse(parser, $0.baseAddress, $0.count, onField, onRow, context) }
        if let error { throw error }
        if consumed != chunk.count {
            throw .malformedQuoting(path: path, line: line + linesInOpenField())
        }
        if parser.pointee.entry_pos > Self.hardFieldLimit {
            throw .fieldTooLong(path: path, line: line, limit: Self.hardFieldLimit)
        }
    }

    /// Ends the input: the last row may lack its newline; an open quote is an error.
    func finish() throws(InputFileError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if csv_fini(parser, onField, onRow, context) != 0 {
            throw .unclosedQuote(path: path, line: line)
        }
        if let error { throw error }
    }

    /// Hands out the rows completed so far; a row still in progress moves to the next batch.
    func takeBatch() -> CSVBatch { batch.takeBatch() }

    var pendingRows: Int { batch.rows }

    fileprivate func field(_ bytes: UnsafeRawPointer?, _ count: Int) {
        if count > 0, let bytes { line += lines(in: UnsafeRawBufferPointer(start: bytes, count: count)) }
        defer { fieldIndex += 1 }
        guard header != nil else {
            headerNames.append(String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self))
            return
        }
        guard keepsFields, fieldIndex < columnOfField.count else { return }
        let column = columnOfField[fieldIndex]
        guard column >= 0 else { return }
        if count > Self.maxFieldBytes {
            if rowProblem == nil, let known = CSVColumn(rawValue: column) {
                rowProblem = .fieldTooLarge(column: known, bytes: count)
            }
            return
        }
        batch.append(bytes, count: count, column: column)
    }

    fileprivate func rowEnded(_ terminator: Int32) {
        if terminator == 10 { line += 1 }
        guard fieldIndex > 0 else { return }  // a blank line, or the LF of a CRLF
        if header == nil {
            acceptHeader()
        } else {
            rowCount += 1
            if keepsFields { keepRow() }
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
            guard let column = CSVColumn(headerName: name.trimmingSpaces) else { return -1 }
            if !columns.insert(column).inserted, error == nil { error = .duplicateColumn(path: path, name: column.headerName) }
            return column.rawValue
        }
        if !columns.contains(.deviceToken), error == nil {
            error = .missingDeviceTokenColumn(path: path, found: names)
        }
        header = CSVHeader(names: names, columns: columns)
    }

    private func linesInOpenField() -> Int {
        let state = parser.pointee
        guard let buffer = state.entry_buf else { return 0 }
        return lines(in: UnsafeRawBufferPointer(start: buffer, count: state.entry_pos))
    }

    private func lines(in bytes: UnsafeRawBufferPointer) -> Int {
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

    private func lines(in chunk: [UInt8], upTo end: Int) -> Int {
        chunk.withUnsafeBytes { lines(in: UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
    }
}

// libcsv calls back only from inside `csv_parse`/`csv_fini`, which the parser itself calls: it is
// alive throughout, so the callbacks use it without a retain and release each (three per row).
private let onField: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Void = { bytes, count, context in
    guard let context else { return }
    Unmanaged<CSVParser>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.field(bytes.map { UnsafeRawPointer($0) }, count) }
}

private let onRow: @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void = { terminator, context in
    guard let context else { return }
    Unmanaged<CSVParser>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.rowEnded(terminator) }
}

extension String {
    var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
