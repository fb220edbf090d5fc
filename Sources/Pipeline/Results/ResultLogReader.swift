import ZstdFile

/// Why a result log cannot be read.
public enum ResultLogError: Error, CustomStringConvertible, Equatable {
    case unreadable(String)
    case corrupt(path: String, detail: String)
    case notARecord(path: String, line: Int, detail: String)

    /// One line for stderr, naming the file and what is wrong.
    public var description: String {
        switch self {
        case .unreadable(let message): message
        case .corrupt(let path, let detail): "\(path): corrupt zstd data (\(detail)); records after this point are lost"
        case .notARecord(let path, let line, let detail): "\(path), line \(line): not a result record (\(detail)); is this a results.jsonl.zst of apns-bulk?"
        }
    }
}

/// The cut last frame a crash left behind: its number (1-based) and its compressed size on disk;
/// for a reader that reads what the cut frame still holds, how many records came out of it and
/// how many decoded bytes of a last, incomplete line were skipped.
public struct CutFrame: Sendable, Equatable {
    /// The cut frame's number, 1-based.
    public let frame: Int
    /// Its compressed bytes on disk.
    public let bytes: Int
    /// Complete records the cut frame still held (read only when asked for).
    public var recordsRead = 0
    /// Decoded bytes of the last, incomplete line, skipped.
    public var incompleteLineBytes = 0
}

/// Reads results.jsonl.zst frame by frame. By default it yields the records of complete frames
/// only, because `--resume` truncates the log at the end of the last complete frame before it
/// appends, and a record it kept from the cut frame would then be lost. `report` asks for
/// `readsCutFrame`: the complete lines zstd still decodes from a cut last frame are records
/// like any other (a crash lost only the lines after them). Either way `cutFrame` describes the
/// cut. Owned by one thread.
public final class ResultLogReader {
    /// The log's path.
    public let path: String
    private let reader: ZstdStreamReader
    private var frame: [UInt8] = []
    private var records: [ResultRecord] = []
    private var nextIndex = 0
    private var line = 0
    private var ended = false
    /// The cut last frame, once reading has reached it; nil when the log ends cleanly.
    public private(set) var cutFrame: CutFrame?
    /// Compressed bytes up to the end of the last complete frame read: where a resumed run's
    /// frames go.
    public private(set) var completeBytes = 0
    /// Records of the last complete frame read (a resume's measure of one flush's worth).
    public private(set) var recordsInLastFrame = 0

    private let readsCutFrame: Bool

    /// Opens `path`; nothing is read yet. `readsCutFrame`: also count the complete lines of a frame a
    /// crash cut (`report` does; a resume stops at the last complete frame, which it truncates to).
    public init(path: String, readsCutFrame: Bool = false) throws(ResultLogError) {
        self.path = path
        self.readsCutFrame = readsCutFrame
        do { reader = try ZstdStreamReader(path: path) } catch { throw .unreadable(error.description) }
    }

    /// The next record of a complete frame, or nil at the end.
    public func next() throws(ResultLogError) -> ResultRecord? {
        while nextIndex == records.count {
            if ended { return nil }
            try readFrame()
        }
        nextIndex += 1
        return records[nextIndex - 1]
    }

    private func readFrame() throws(ResultLogError) {
        records.removeAll(keepingCapacity: true)
        nextIndex = 0
        frame.removeAll(keepingCapacity: true)
        while true {
            let status: ZstdReadStatus
            do {
                status = try reader.read(appendingTo: &frame, limit: 1 << 20)
            } catch {
                switch error {
                case .truncated(_, let number, let cutBytes):
                    var cut = CutFrame(frame: number, bytes: cutBytes)
                    ended = true
                    if readsCutFrame {
                        let complete = (frame.lastIndex(of: 10) ?? -1) + 1
                        cut.incompleteLineBytes = frame.count - complete
                        frame.removeSubrange(complete...)
                        try parseLines()
                        cut.recordsRead = records.count
                    }
                    cutFrame = cut
                    return
                case .corrupt(_, let number, let offset, let detail):
                    throw .corrupt(path: path, detail: "frame \(number), byte \(offset): \(detail)")
                default:
                    throw .unreadable(error.description)
                }
            }
            switch status {
            case .more: continue
            case .frameEnd: try parseFrame(); return
            case .end:
                ended = true
                if !frame.isEmpty { try parseFrame() }
                return
            }
        }
    }

    private func parseFrame() throws(ResultLogError) {
        defer {
            completeBytes = reader.compressedOffset
            recordsInLastFrame = records.count
        }
        try parseLines()
    }

    private func parseLines() throws(ResultLogError) {
        var start = 0
        while start < frame.count {
            let end = frame[start...].firstIndex(of: 10) ?? frame.count
            line += 1
            if end > start {
                do {
                    records.append(try ResultRecordParser.parse(frame[start..<end]))
                } catch {
                    throw .notARecord(path: path, line: line, detail: error.detail)
                }
            }
            start = end + 1
        }
    }
}
