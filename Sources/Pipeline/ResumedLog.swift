#if canImport(Glibc)
import Glibc
#endif

/// What a resumed campaign carries over from its result log: the rows already recorded, their
/// counts for the summary, dead-tokens.csv rebuilt from them, and where the new frames go.
final class ResumedLog {
    let done: DoneRows
    /// The old records' counts, reasons and latencies: the new run's summary starts from these.
    var summary: Summary
    /// dead-tokens.csv, rewritten with the old records' dead tokens and left open for the new ones.
    let deadTokens: DeadTokenReport
    /// The log's complete frames end here; a frame the crash cut lies beyond and is cut off.
    let keptBytes: Int
    /// Records in the log's last complete frame: about one flush's worth of answers.
    let recordsInLastFrame: Int
    let cutFrame: CutFrame?

    private init(done: DoneRows, summary: Summary, deadTokens: DeadTokenReport, keptBytes: Int,
                 recordsInLastFrame: Int, cutFrame: CutFrame?) {
        self.done = done
        self.summary = summary
        self.deadTokens = deadTokens
        self.keptBytes = keptBytes
        self.recordsInLastFrame = recordsInLastFrame
        self.cutFrame = cutFrame
    }

    /// Reads `logPath` (absent: nothing done yet) and rewrites `deadTokensPath` from it. A record
    /// for a row already seen (none should exist) is not counted twice.
    static func load(logPath: String, deadTokensPath: String) throws(CampaignDirectoryError) -> ResumedLog {
        let deadTokens: DeadTokenReport
        do { deadTokens = try DeadTokenReport(path: deadTokensPath) } catch {
            throw .output(path: deadTokensPath, detail: error.description)
        }
        var done = DoneRows()
        var summary = Summary()
        guard access(logPath, F_OK) == 0 else {
            return ResumedLog(done: done, summary: summary, deadTokens: deadTokens, keptBytes: 0,
                              recordsInLastFrame: 0, cutFrame: nil)
        }
        do {
            let reader = try ResultLogReader(path: logPath)
            while let record = try reader.next() {
                guard done.insert(record.row) else { continue }
                summary.add(record)
                try deadTokens.add(record)
            }
            summary.rows = done.count
            summary.carriedRows = done.count
            summary.carriedAnswered = summary.answeredRows
            return ResumedLog(done: done, summary: summary, deadTokens: deadTokens, keptBytes: reader.completeBytes,
                              recordsInLastFrame: reader.recordsInLastFrame, cutFrame: reader.cutFrame)
        } catch let error as ResultLogError {
            throw .unreadableLog(detail: error.description)
        } catch let error as OutputFileError {
            throw .output(path: deadTokensPath, detail: error.description)
        } catch {
            throw .unreadableLog(detail: "\(error)")
        }
    }
}
