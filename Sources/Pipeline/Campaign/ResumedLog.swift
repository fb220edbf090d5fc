#if canImport(Glibc)
import Glibc
#endif
import ZstdFile

/// What a resumed campaign carries over from its result log: the rows already recorded, their
/// counts for the summary, dead-tokens.csv rebuilt from them, and where the new frames go.
/// Built before the run starts, then handed to the writer thread (and `done` to the reader).
final class ResumedLog {
    let done: DoneRows
    /// Rows recorded `aborted`: sent again, but not counted as lost in a crash (`CrashLoss`).
    private(set) var aborted = DoneRows()
    /// The old records' counts, reasons and latencies: the new run's summary starts from these.
    var summary: Summary
    /// dead-tokens.csv, rewritten with the old records' dead tokens and left open for the new ones.
    let deadTokens: DeadTokenReport
    /// The log's complete frames end here; a frame the crash cut lies beyond and is cut off.
    let keptBytes: Int
    let cutFrame: CutFrame?

    private init(done: DoneRows, summary: Summary, deadTokens: DeadTokenReport, keptBytes: Int, cutFrame: CutFrame?) {
        self.done = done
        self.summary = summary
        self.deadTokens = deadTokens
        self.keptBytes = keptBytes
        self.cutFrame = cutFrame
    }

    /// Reads `logPath` (absent: nothing done yet) and rewrites `deadTokensPath` from it. A record
    /// for a row already seen (none should exist) is not counted twice. Rows recorded `aborted`
    /// (a SIGTERM, refused credentials, a fatal error) were not finished, so they are sent again:
    /// when there are any, the log is rewritten without them (to a new file, renamed over the old
    /// one, so a crash meanwhile leaves the old log whole) and every row stays once in it.
    static func load(logPath: String, deadTokensPath: String,
                     kind: ResultRecord.Kind = .deviceToken) throws(CampaignDirectoryError) -> ResumedLog {
        let deadTokens: DeadTokenReport
        do { deadTokens = try DeadTokenReport(path: deadTokensPath, kind: kind) } catch {
            throw .output(path: deadTokensPath, detail: error.description)
        }
        var done = DoneRows(), aborted = DoneRows()
        var summary = Summary()
        guard access(logPath, F_OK) == 0 else {
            return ResumedLog(done: done, summary: summary, deadTokens: deadTokens, keptBytes: 0, cutFrame: nil)
        }
        do {
            let reader = try ResultLogReader(path: logPath)
            while let record = try reader.next() {
                if record.outcome == .aborted {
                    if !done.contains(record.row) { aborted.insert(record.row) }
                    continue
                }
                guard done.insert(record.row) else { continue }
                summary.add(record)
                try deadTokens.add(record)
            }
            summary.rows = done.count
            summary.carriedRows = done.count
            summary.carriedAnswered = summary.answeredRows
            let keptBytes = aborted.count == 0 ? reader.completeBytes : try rewriteWithout(aborted, logPath: logPath)
            let log = ResumedLog(done: done, summary: summary, deadTokens: deadTokens, keptBytes: keptBytes,
                                 cutFrame: reader.cutFrame)
            log.aborted = aborted
            return log
        } catch let error as ResultLogError {
            throw .unreadableLog(detail: error.description)
        } catch let error as OutputFileError {
            throw .output(path: deadTokensPath, detail: error.description)
        } catch let error as CampaignDirectoryError {
            throw error
        } catch let error as ZstdWriteError {
            throw .output(path: logPath, detail: error.description)
        } catch {
            throw .unreadableLog(detail: "\(error)")
        }
    }

    /// The log's complete records but the aborted ones (and any second record of a row), written
    /// to a new file that then replaces the log. Returns the new file's size.
    private static func rewriteWithout(_ aborted: DoneRows, logPath: String) throws -> Int {
        let newPath = logPath + ".resuming"
        let reader = try ResultLogReader(path: logPath)
        let log = try ResultLog(path: newPath)
        var kept = DoneRows()
        while let record = try reader.next() {
            guard record.outcome != .aborted, kept.insert(record.row) else { continue }
            try log.append(record)
        }
        try log.close()
        guard rename(newPath, logPath) == 0 else {
            throw CampaignDirectoryError.output(path: logPath, detail: "cannot replace it: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard stat(logPath, &info) == 0 else {
            throw CampaignDirectoryError.output(path: logPath, detail: String(cString: strerror(errno)))
        }
        return Int(info.st_size)
    }
}
