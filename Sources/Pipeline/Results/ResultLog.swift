import ZstdFile
#if canImport(Glibc)
import Glibc
#endif

/// Writes results.jsonl.zst as a sequence of zstd frames: a frame per flush, at least every
/// `flushInterval` (and whenever `maxFrameBytes` are pending), each frame one `write()`, so after a
/// crash only the cut last frame is lost. Owned by the writer thread (not Sendable).
///
/// A kill -9 loses the answers not yet in a frame, and `--resume` sends those rows again: the
/// interval is a tenth of a second, so that with the writer's wait for records (50 ms at most) no
/// answer is unlogged for much more than 0.15 s. A frame per 0.1 s is one `write()` and a zstd
/// frame header (~12 bytes) each; a frame that short compresses a little worse only at rates where
/// it holds a few hundred lines.
public final class ResultLog {
    /// results.jsonl.zst's path.
    public let path: String
    private let writer: ZstdFrameWriter
    private let flushInterval: Duration
    private let maxFrameBytes: Int
    @exclusivity(unchecked) private var lastFlush: ContinuousClock.Instant
    /// Records appended so far (some maybe not yet flushed).
    @exclusivity(unchecked) public private(set) var recordsWritten = 0

    /// `appendingAfter`: a resumed campaign's log keeps its first that many bytes (its complete
    /// frames; a frame a crash cut is cut off, so the file stays valid zstd) and gains new frames.
    public init(path: String, appendingAfter keptBytes: Int? = nil, flushInterval: Duration = .milliseconds(100),
                maxFrameBytes: Int = 1 << 20, now: ContinuousClock.Instant = .now) throws(ZstdWriteError) {
        if let keptBytes, truncate(path, off_t(keptBytes)) != 0, errno != ENOENT {
            throw .write(path: path, errno: errno)
        }
        self.path = path
        // Level 1, not zstd's default 3: at level 3 compression was a tenth of `send`'s CPU
        // (benchmarks/RESULTS.md); these JSON lines still shrink about fivefold at level 1 (the random
        // hex of tokens and apns-ids is most of what is left).
        // A 2^11-entry hash table instead of level 1's default: these lines' matches are near
        // (the keys of the line before), and the small table stays in cache: `zstd -b1` on 83.6 MB
        // of result lines, 580–650 → 680–710 MB/s, and 4.77 → 4.84 × smaller.
        // No content checksum: XXH64 over every line was ~270 instructions a row (7 % of zstd's share),
        // and the log needs none to find a frame a crash cut (it lacks its last block).
        writer = try ZstdFrameWriter(path: path, level: 1, hashLog: 11, targetLength: ResultLog.targetLength,
                                     checksum: false, appending: keptBytes != nil)
        self.flushInterval = flushInterval
        self.maxFrameBytes = maxFrameBytes
        lastFlush = now
    }

    /// The zstd fast strategy's acceleration (level 1's own is 0), literals still Huffman-coded:
    /// callgrind per row (90k − 30k rows), zstd's share ~5.1k → ~3.7k instructions (−27 %) for a
    /// log 6.8 % larger; 2 gave less for +2.1 %, 8 little more for +18 % (benchmarks/RESULTS.md).
    static let targetLength: Int32 = 4

    /// Appends one record's line; written to disk with the next frame.
    public func append(_ record: ResultRecord) throws(ZstdWriteError) {
        record.withLine { [writer] fields in
            if record.kind == .broadcast {
                ResultLineEncoder.append(BroadcastResultLine(line: fields), to: writer)
            } else {
                ResultLineEncoder.append(fields, to: writer)
            }
        }
        recordsWritten += 1
        if writer.pendingByteCount >= maxFrameBytes { try writer.flush() }
    }

    /// The text behind records' credential groups (`RecordLabels`); nil in a run without them.
    var labels: RecordLabels?
    /// The kind of the records `append(_: RowResult)` writes: a broadcast's have lines of their own.
    var kind = ResultRecord.Kind.deviceToken

    func append(_ record: borrowing RowResult) throws(ZstdWriteError) {
        // Three byte loads for a record of a one-credential run; the labels only for the others.
        if kind == .broadcast {
            appendBroadcast(record)
        } else if record.lane | UInt16(record.environmentCode | record.fallbackFrom) != 0, let labels {
            appendLabelled(record, labels)
        } else {
            record.appendJSONLine(to: writer, labels: nil)
        }
        recordsWritten += 1
        if writer.pendingByteCount >= maxFrameBytes { try writer.flush() }
    }

    @inline(never)
    private func appendBroadcast(_ record: borrowing RowResult) {
        let labels = record.lane | UInt16(record.environmentCode | record.fallbackFrom) != 0 ? self.labels : nil
        record.withLine(labels: labels) { ResultLineEncoder.append(BroadcastResultLine(line: $0), to: writer) }
    }

    // Out of line: the per-row `append` of a one-credential run keeps no labels to retain and release.
    @inline(never)
    private func appendLabelled(_ record: borrowing RowResult, _ labels: RecordLabels) {
        record.appendJSONLine(to: writer, labels: labels)
    }

    /// Writes a frame when the last one is `flushInterval` old; call it at least that often.
    public func flushIfDue(now: ContinuousClock.Instant) throws(ZstdWriteError) {
        guard now - lastFlush >= flushInterval else { return }
        try flush(now: now)
    }

    /// Writes the pending lines as one frame now.
    public func flush(now: ContinuousClock.Instant = .now) throws(ZstdWriteError) {
        try writer.flush()
        lastFlush = now
    }

    /// Writes the last frame and closes the file.
    public func close() throws(ZstdWriteError) { try writer.close() }

    /// Frames written so far.
    public var framesWritten: Int { writer.framesWritten }
}
