/// Rows from memory as the reader's batches: each `CampaignRow`'s fields are copied into a
/// `CSVBatch` as a CSV row's would be, numbered from 1 in sequence order, so the reader and the
/// `RowDecoder` treat them exactly like rows of a file. A field over `CSVSource.maxFieldBytes` is
/// left out and marks its row `FieldTooLarge`, as the CSV parser does. With several credentials
/// the rows' `environment` and `keyID` go into the batch slots the CSV's `environment` and
/// `key_id` columns would (`GroupColumns`). Used by the reader thread.
final class RowSequenceSource<Rows: Sequence<CampaignRow>>: RowSource {
    /// A batch ends at this many rows or bytes, whichever comes first: about a CSV chunk's worth.
    static var maxBatchRows: Int { 2048 }
    static var maxBatchBytes: Int { 256 * 1024 }

    private var rows: Rows.Iterator
    private var builder: CSVBatchBuilder
    /// The batch slots of `environment` and `keyID`; nil: not read (one credential).
    private let environmentSlot: Int?
    private let keyIDSlot: Int?
    private var number = 0
    private var finished = false

    /// Rows from memory are never cut short by an unreadable line.
    var stoppedAt: InputStop? { nil }

    init(_ rows: consuming Rows, columns: Campaign.GroupColumns? = nil) {
        self.rows = rows.makeIterator()
        builder = CSVBatchBuilder(extraColumns: columns?.extras.count ?? 0)
        environmentSlot = columns?.environmentSlot
        keyIDSlot = columns?.keyIDSlot
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
        func add(_ value: String?, slot: Int, column: CSVColumn?) {
            guard var value else { return }
            value.withUTF8 { field in
                if field.count > CSVSource.maxFieldBytes {
                    if problem == nil {
                        problem = column.map { .fieldTooLarge(column: $0, bytes: field.count) }
                            ?? .unusedFieldTooLarge(field: slot + 1, bytes: field.count)
                    }
                    return
                }
                builder.append(field.baseAddress.map(UnsafeRawPointer.init), count: field.count, column: slot)
                bytes += field.count
            }
        }
        for column in CSVColumn.allCases { add(row.value(column), slot: column.rawValue, column: column) }
        // Over the limit, these too make the row FieldTooLarge, as any CSV field does.
        if let environmentSlot { add(row.environment, slot: environmentSlot, column: nil) }
        if let keyIDSlot { add(row.keyID, slot: keyIDSlot, column: nil) }
        builder.endRow(number: number, problem: problem)
        return bytes
    }
}
