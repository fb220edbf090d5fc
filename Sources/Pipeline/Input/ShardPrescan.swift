/// The prescan of a sharded run (`--shard K/N`): one pass over the input, as the reader will
/// parse it (the same `CSVSource`, so every row falls in the same shard here and there), that finds
/// what is wrong with the file, counts this shard's rows for progress, ETA and summary.json, and
/// marks which rows are this shard's, so that a resume can tell when the shard is finished and
/// what a crash left unsent (one bit per campaign row: 1.25 MB at 10 million rows).
///
/// Its fast path (`ShardRecordScanner`) delimits records as the unsharded prescan's counter does
/// and hashes only the token field; anything unusual in the file, or token auth with no `--topic`
/// (every row's topic is checked), takes the libcsv pass, which is the reader's own parsing.
struct ShardPrescan {
    let result: PrescanResult
    /// This shard's row numbers.
    let members: DoneRows

    /// Reads the whole input once; throws what is wrong with the file itself, naming its line.
    /// `requiresTopic`: every row must fill the `topic` column (token auth and no `--topic`), as
    /// the unsharded prescan checks it, every shard's rows alike.
    static func run(path: String, shard: Shard, chunkSize: Int = 256 * 1024,
                    requiresTopic: Bool = false) throws(InputFileError) -> ShardPrescan {
        if !requiresTopic, let fast = try? scan(path: path, shard: shard, chunkSize: chunkSize) { return fast }
        return try parse(path: path, shard: shard, chunkSize: chunkSize, requiresTopic: requiresTopic)
    }

    /// The fast path; nil when the file needs libcsv's eye (or reading it failed: libcsv's pass
    /// then says why, naming the line).
    static func scan(path: String, shard: Shard, chunkSize: Int = 256 * 1024) throws(InputFileError) -> ShardPrescan? {
        let header = try Prescan.readHeader(path: path, chunkSize: chunkSize)
        guard let tokenField = header.names.firstIndex(where: { CSVColumn(headerName: $0.trimmingSpaces) == .deviceToken })
        else { return nil }
        let file = try InputFile(path: path)
        var scanner = ShardRecordScanner(shard: shard, tokenField: tokenField, headerFields: header.fieldCount)
        let scanned = try file.scanToEnd(chunkSize: chunkSize) { chunk in
            scanner.scan(chunk)
            return !scanner.isSuspicious
        }
        guard scanned else { return nil }
        scanner.finish()
        guard !scanner.isSuspicious else { return nil }
        return ShardPrescan(result: PrescanResult(rows: scanner.members.count, header: header), members: scanner.members)
    }

    /// The libcsv pass: the reader's own parsing, every error named with its line.
    static func parse(path: String, shard: Shard, chunkSize: Int = 256 * 1024,
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
