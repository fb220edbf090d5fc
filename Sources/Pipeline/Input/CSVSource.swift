/// Streams a campaign CSV (plain or `.csv.zst`) in large chunks, never the whole file in memory.
///
/// Decisions (docs/file-formats.md, "Input"): the header row is required and columns are mapped by name
/// (case-insensitive, a UTF-8 BOM ignored); unknown columns are ignored. Spaces and tabs around
/// unquoted fields are trimmed (libcsv's default: harmless for hex tokens, numbers and JSON);
/// quoted fields are kept exactly. Blank lines are skipped and not numbered. A row with more or
/// fewer fields than the header carries `CSVRowProblem.fieldCount` (its fields are still readable,
/// missing ones are nil): it should be rejected, since a shifted column would send the wrong payload.
/// A field over 64 KiB carries `.fieldTooLarge`. Neither stops the run. Used by one thread.
public final class CSVSource {
    /// A field longer than this makes its row `rejected` (FieldTooLarge); the run goes on.
    public static let maxFieldBytes = CSVParser.maxFieldBytes
    /// The input's name for messages (`stdin (--input -)` for `-`).
    public let path: String
    /// The header row, read by init.
    public let header: CSVHeader
    private let file: InputFile
    private let parser: CSVParser
    private let chunkSize: Int
    private var chunk: [UInt8] = []
    private var finished = false
    private var current: CSVBatch?
    private var currentIndex = 0

    /// Where reading stopped early, once `nextBatch` has thrown for a line it could not read.
    public private(set) var stoppedAt: InputStop?
    /// The error found after rows that were still to be handed out: thrown by the next call.
    private var pendingError: InputFileError?

    /// Whether `path` is a stream (`-` for stdin, a named pipe, a character device): it can be read
    /// only once, so it gets no prescan.
    public static func isStream(path: String) -> Bool { InputFile.isStream(path: path) }

    /// Opens the input and reads up to the end of the header row.
    /// - Parameters:
    ///   - path: a `.csv` or `.csv.zst` file, or `-` for stdin.
    ///   - chunkSize: bytes read at a time; a batch holds about one chunk's rows.
    ///   - requiresTopic: the header must have a `topic` column (token auth with no `--topic`).
    ///   - shouldStop: asked while a stream keeps us waiting; true ends the wait with `.interrupted`.
    public convenience init(path: String, chunkSize: Int = 256 * 1024, requiresTopic: Bool = false,
                shouldStop: @escaping @Sendable () -> Bool = { false }) throws(InputFileError) {
        try self.init(path: path, chunkSize: chunkSize, requiresTopic: requiresTopic, extraColumns: [], shouldStop: shouldStop)
    }

    /// The same, also keeping `extraColumns` (names in lower case), which a payload template reads.
    /// `names`: what the header's names mean (a device campaign's or a broadcast's).
    init(path: String, chunkSize: Int = 256 * 1024, requiresTopic: Bool = false, extraColumns: [String],
         names: CSVColumnNames = .deviceCampaign,
         shouldStop: @escaping @Sendable () -> Bool = { false }) throws(InputFileError) {
        self.chunkSize = chunkSize
        file = try InputFile(path: path, shouldStop: shouldStop)
        self.path = file.path
        parser = CSVParser(path: file.path, keepsFields: true, extraColumns: extraColumns, names: names)
        chunk.reserveCapacity(chunkSize)
        do {
            while parser.header == nil {
                guard try file.read(into: &chunk, limit: chunkSize) else {
                    try parser.finish()
                    finished = true
                    break
                }
                try parser.parse(chunk)
            }
        } catch {
            // A bad line in the chunk that completed the header is a bad line like any later one
            // (found by fuzzing): the rows before it are handed out first, whatever the chunk size.
            guard Self.isBadLineAfterHeader(error, parser: parser) else { throw error }
            stoppedAt = InputStop(error: error, fallback: parser.lineReached)
            pendingError = error
            finished = true
        }
        guard let header = parser.header else {
            throw file.bytesRead == 0 ? .empty(path: file.path) : .noHeader(path: file.path)
        }
        if requiresTopic && !header.has(.topic) { throw .noTopicColumn(path: file.path) }
        self.header = header
    }

    /// Whether `error`, thrown while the header was being read, is about a line after a good header
    /// (the header's own errors, and a NUL byte in it, still refuse the input).
    private static func isBadLineAfterHeader(_ error: InputFileError, parser: CSVParser) -> Bool {
        guard let header = parser.header, parser.error == nil else { return false }
        switch error {
        case .binary: return !header.names.contains { $0.utf8.contains(0) }
        case .malformedQuoting, .unclosedQuote, .fieldTooLong: return true
        default: return false
        }
    }

    /// The next batch of rows (one read chunk's worth), or nil at the end of the file.
    ///
    /// When a line cannot be read (possible only without the prescan), the rows completed before
    /// it are handed out first, `stoppedAt` says where, and the next call throws. A stop request
    /// while waiting on a stream throws `.interrupted` and sets no `stoppedAt`.
    public func nextBatch() throws(InputFileError) -> CSVBatch? {
        if let pendingError, parser.pendingRows == 0 { throw pendingError }
        do {
            while parser.pendingRows == 0 && !finished {
                if try file.read(into: &chunk, limit: chunkSize) {
                    try parser.parse(chunk)
                } else {
                    try parser.finish()
                    finished = true
                }
            }
        } catch {
            if error != .interrupted(path: path) { stoppedAt = InputStop(error: error, fallback: parser.lineReached) }
            guard parser.pendingRows > 0 else { throw error }
            pendingError = error
        }
        return parser.pendingRows == 0 ? nil : parser.takeBatch()
    }

    /// The next row, or nil at the end of the file.
    public func next() throws(InputFileError) -> CSVRow? {
        if let batch = current, currentIndex < batch.count {
            currentIndex += 1
            return batch[currentIndex - 1]
        }
        guard let batch = try nextBatch() else { return nil }
        current = batch
        currentIndex = 1
        return batch[0]
    }
}
