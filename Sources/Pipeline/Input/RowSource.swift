/// Where the reader thread gets its rows: a CSV input (`CSVSource`) or rows from memory
/// (`RowSequenceSource`). Both hand out `CSVBatch`es, so every row, wherever it came from, goes
/// through the one `RowDecoder` and gets the same rejections. Used by one thread (its metatype,
/// not its value, crosses to the reader thread: `SendableMetatype`).
protocol RowSource: AnyObject, SendableMetatype {
    /// The next batch of rows, or nil at the end. Throws when the input cannot be read further.
    func nextBatch() throws(InputFileError) -> CSVBatch?
    /// Where reading stopped early, once `nextBatch` has thrown for a line it could not read.
    var stoppedAt: InputStop? { get }
}

extension CSVSource: RowSource {}
