/// The prescan of a sharded run (`--shard K/N`): one pass over the input, as the reader will
/// parse it (the same `CSVSource`, so every row falls in the same shard here and there), that finds
/// what is wrong with the file, counts this shard's rows for progress, ETA and summary.json, and
/// marks which rows are this shard's, so that a resume can tell when the shard is finished and
/// what a crash left unsent (one bit per campaign row: 1.25 MB at 10 million rows).
///
/// It parses every field where the unsharded prescan only counts records (CSVRecordCounter):
/// a sharded run pays for that, an unsharded one does not.
struct ShardPrescan {
    let result: PrescanResult
    /// This shard's row numbers.
    let members: DoneRows

    /// Reads the whole input once; throws what is wrong with the file itself, naming its line.
    /// `requiresTopic`: every row must fill the `topic` column (token auth and no `--topic`), as
    /// the unsharded prescan checks it, every shard's rows alike.
    static func run(path: String, shard: Shard, chunkSize: Int = 256 * 1024,
                    requiresTopic: Bool = false) throws(InputFileError) -> ShardPrescan {
        let source = try CSVSource(path: path, chunkSize: chunkSize, requiresTopic: requiresTopic)
        var members = DoneRows()
        while let batch = try source.nextBatch() {
            for index in batch.indices {
                let row = batch.number(at: index)
                if requiresTopic, batch.fieldRange(.topic, at: index)?.isEmpty ?? true, !Self.topicTooLarge(batch, at: index) {
                    throw .emptyTopic(path: source.path, row: row)
                }
                if shard.owns(batch, at: index) { members.insert(row) }
            }
        }
        return ShardPrescan(result: PrescanResult(rows: members.count, header: source.header), members: members)
    }

    /// A topic over 64 KiB is there, only not kept: its row is rejected (FieldTooLarge), as the
    /// unsharded prescan, which sees the field's length, lets it through.
    private static func topicTooLarge(_ batch: borrowing CSVBatch, at index: Int) -> Bool {
        if case .fieldTooLarge(column: .topic, _)? = batch.problem(at: index) { return true }
        return false
    }
}
