#if canImport(Glibc)
import Glibc
#endif

/// What a kill -9 (an OOM kill, a reboot) cost a campaign, found by `--resume` before it sends:
/// the rows the crashed run had handed to a connection (its `sent-rows`) that have no record in
/// the log. APNs may have answered them, maybe delivered them; the answer died with the process.
/// A resume sends them again (`resent_after_crash` counts them, exactly), or with
/// `--no-resend-lost` withholds them for good: `withheld-rows` keeps them, and every run from then
/// on records them `gave_up` `LostInCrash` without sending them.
///
/// Counted once per crash: each run's `sent-rows` names the run (campaign.json's `runs`), and a
/// resume counts only the file of the run before it, then starts its own. A row resent and logged
/// is never counted again; a row lost by two crashes in a row is counted (and sent) once after
/// each.
enum CrashLoss {
    static let withheldFileName = "withheld-rows"
    /// What the previous apns-bulk kept instead of `sent-rows` (a bound, not the rows).
    static let oldMarkFileName = "sent-through"

    /// The rows run `run` sent that the log does not record (`aborted` records included: the run
    /// that stopped recorded those) and that are not withheld already.
    static func rows(directory: String, run: Int, log: ResumedLog, withheld: DoneRows) -> DoneRows {
        guard let file = RowBitmapFile.read(path: directory + "/" + SentRows.fileName), file.run == run else {
            return DoneRows()
        }
        return file.rows.subtracting(log.done, log.aborted, withheld)
    }

    /// The rows withheld by `--no-resend-lost` so far (none without the file).
    static func withheld(directory: String) -> DoneRows {
        RowBitmapFile.read(path: directory + "/" + withheldFileName)?.rows ?? DoneRows()
    }

    static func writeWithheld(_ rows: DoneRows, directory: String) throws(CampaignDirectoryError) {
        let path = directory + "/" + withheldFileName
        do { try RowBitmapFile.write(rows, run: 0, to: path) } catch {
            throw .output(path: path, detail: String(cString: strerror(error.errno)))
        }
    }

    /// A run of the previous apns-bulk left `sent-through`, not `sent-rows`: if it was the one that
    /// crashed, which of its rows it sent is not known. The file goes (this version never reads
    /// it); unless a run of this version came after it (`newerRunRecorded`), the note says what
    /// that means. Nil when there is nothing to say.
    static func forgetOldMark(directory: String, newerRunRecorded: Bool) -> String? {
        let path = directory + "/" + oldMarkFileName
        guard access(path, F_OK) == 0 else { return nil }
        _ = unlink(path)
        if newerRunRecorded { return nil }
        return "note: the run that stopped last was an earlier apns-bulk, which kept no record of the rows it "
            + "sent: those it sent whose answers it had not logged are sent again, and resent_after_crash cannot count them"
    }
}
