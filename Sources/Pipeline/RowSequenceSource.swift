/// Rows from memory as the reader's batches: each `CampaignRow`'s fields are copied into a
/// `CSVBatch` as a CSV row's would be, numbered from 1 in sequence order, so the reader and the
/// `RowDecoder` treat them exactly like rows of a file. A field over `CSVSource.maxFieldBytes` is
/// left out and marks its row `FieldTooLarge`, as the CSV parser does. Used by the reader thread.
final class RowSequenceSource<Rows: Sequence<CampaignRow>>: RowSource {
    /// A batch ends at this many rows or bytes, whichever comes first: about a CSV chunk's worth.
    static var maxBatchRows: Int { 2048 }
    static var maxBatchBytes: Int { 256 * 1024 }

    private var rows: Rows.Iterator
    private var builder = CSVBatchBuilder()
    private var number = 0
    private var finished = false

    /// Rows from memory are never cut short by an unreadable line.
    var stoppedAt: InputStop? { nil }

    init(_ rows: consuming Rows) {
        self.rows = rows.makeIterator()
    }

    func nextBatch() throws(InputFileError) -> CSVBatch? {
        guard !finished else { return nil }
        var bytes = 0
        while builder.rows < Self.maxBatchRows && bytes < Self.maxBatchBytes {
            guard let row = rows.next() else {
                finished = true
                break
            }
            bytes += append(row)
        }
        return builder.rows == 0 ? nil : builder.takeBatch()
    }

    /// Adds `row` to the batch; returns the bytes it took.
    private func append(_ row: CampaignRow) -> Int {
        number += 1
        var problem: CSVRowProblem?
        var bytes = 0
        for column in CSVColumn.allCases {
            guard var value = row.value(column) else { continue }
            value.withUTF8 { field in
                if field.count > CSVSource.maxFieldBytes {
                    if problem == nil { problem = .fieldTooLarge(column: column, bytes: field.count) }
                    return
                }
                builder.append(field.baseAddress.map(UnsafeRawPointer.init), count: field.count, column: column.rawValue)
                bytes += field.count
            }
        }
        builder.endRow(number: number, problem: problem)
        return bytes
    }
}
