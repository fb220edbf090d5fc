/// One data row: its 1-based number (header excluded, blank lines not counted) and the raw bytes
/// of the known columns, as slices of its batch's storage (no copy, no per-field allocation).
public struct CSVRow: Sendable {
    /// The 1-based data row number (header excluded, blank lines not counted).
    public let number: Int
    /// What is wrong with the row as a whole; it is then `rejected` with that reason.
    public let problem: CSVRowProblem?
    let storage: [UInt8]
    let bounds: [Int32]
    let boundsBase: Int

    /// The field's bytes (quotes removed, `""` unescaped, spaces around unquoted fields trimmed);
    /// nil when the header has no such column or the row is too short to reach it.
    public func field(_ column: CSVColumn) -> ArraySlice<UInt8>? {
        CSVBatch.fieldRange(column, bounds: bounds, base: boundsBase).map { storage[$0] }
    }

    /// The field as a String (invalid UTF-8 repaired with U+FFFD); for display and tests.
    public func string(_ column: CSVColumn) -> String? {
        field(column).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The rows parsed from one read chunk, in one allocation: hand it to another thread as a whole.
public struct CSVBatch: Sendable, RandomAccessCollection {
    /// A start and an end offset in `storage` per known column (-1 when the row has no such field).
    static let knownBoundsPerRow = 16

    let storage: [UInt8]
    let bounds: [Int32]
    /// A row's bounds: the known columns', then those of the extra columns a payload template
    /// reads (`CSVParser.extraColumns`), slot `CSVColumn.allCases.count + k` for the k-th.
    let boundsPerRow: Int
    let numbers: [Int]
    let problems: [Int: CSVRowProblem]

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of rows.
    public var endIndex: Int { numbers.count }
    /// Row `index` (0-based within the batch; its `number` counts from the file's start).
    public subscript(index: Int) -> CSVRow {
        CSVRow(number: numbers[index], problem: problem(at: index), storage: storage, bounds: bounds,
               boundsBase: index * boundsPerRow)
    }

    // Reading a row's parts from the batch itself, as the reader does, makes no `CSVRow`: that would
    // hold the storage and the bounds, a retain and a release of each per row.

    func number(at index: Int) -> Int { numbers[index] }

    func problem(at index: Int) -> CSVRowProblem? {
        problems.isEmpty ? nil : problems[index]
    }

    /// `self[index].field(column)`.
    func field(_ column: CSVColumn, at index: Int) -> ArraySlice<UInt8>? {
        fieldRange(column, at: index).map { storage[$0] }
    }

    /// Where the field is in `storage`: for a check that needs no slice (a slice retains the storage).
    /// Inlined, as is the static form: a call was a retain and a release of `bounds` (two per row).
    @inline(__always)
    func fieldRange(_ column: CSVColumn, at index: Int) -> Range<Int>? {
        Self.fieldRange(column, bounds: bounds, base: index * boundsPerRow)
    }

    /// The field in `slot` (a known column's raw value, or an extra column's), for a template.
    func field(slot: Int, at index: Int) -> ArraySlice<UInt8>? {
        let base = index * boundsPerRow + 2 * slot
        guard 2 * slot < boundsPerRow, bounds[base] >= 0 else { return nil }
        return storage[Int(bounds[base])..<Int(bounds[base + 1])]
    }

    /// Where the field in `slot` is in `storage`: for a reader that lends it without a slice.
    func fieldRange(slot: Int, at index: Int) -> Range<Int>? {
        let base = index * boundsPerRow + 2 * slot
        guard 2 * slot < boundsPerRow, bounds[base] >= 0 else { return nil }
        return Int(bounds[base])..<Int(bounds[base + 1])
    }

    @inline(__always)
    fileprivate static func fieldRange(_ column: CSVColumn, bounds: [Int32], base: Int) -> Range<Int>? {
        let start = bounds[base + 2 * column.rawValue]
        guard start >= 0 else { return nil }
        return Int(start)..<Int(bounds[base + 2 * column.rawValue + 1])
    }
}
