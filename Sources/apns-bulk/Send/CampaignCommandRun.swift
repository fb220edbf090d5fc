import ArgumentParser
import Foundation
import Pipeline
import Report

/// What `send` and `broadcast` share once their setup is made: the campaign run with SIGINT and
/// SIGTERM stopping it, then its summary on stdout and its exit status.
extension Campaign {
    /// Runs the campaign. SIGINT/SIGTERM: it stops reading, gives in-flight streams a short grace
    /// period, records the rest as aborted, writes every file and exits 2; a signal while a stream
    /// has not yet given its header row exits 2 too, with nothing read, sent or written. Only the
    /// run control is captured: the last reference to TLS or key objects must not end on the
    /// signal thread. A setup error is the command line's (exit 1).
    func runStoppingOnSignals() throws -> Result {
        let signals = try StopSignals.install()
        let runControl = control
        signals.forward { runControl.stop(.interrupted(signal: $0)) }
        defer { signals.cancel() }
        do {
            return try run()
        } catch SetupError.input(.interrupted(let path)) {
            writeStandardError("stopped: interrupted while waiting for \(path) to give its header row; "
                               + "no row was read, nothing was sent and no files were written.\n")
            throw ExitCode(2)
        } catch let error as SetupError {
            throw RunFailure.usage(error.description)
        }
    }
}

enum CampaignReport {
    /// The run's summary goes to stdout, where a script or cron (which mails it) reads the result
    /// even with stderr, the progress and diagnostics, sent elsewhere or discarded; why the run
    /// stopped goes to stderr too, where its warnings and progress are read. Throws the exit status
    /// when it is not 0. `deadList`: the dead tokens' or dead channels' file, and its name here.
    static func finish(_ result: Campaign.Result, directory: String, resumed: Bool,
                       deadList: (label: String, file: String)) throws {
        let summary = result.summary
        var text = ""
        if resumed && summary.carriedRows > 0 && summary.carriedRows == summary.rows {
            text += "the campaign in \(directory) is already finished: every one of its \(summary.rows) rows has a record; nothing was sent\n"
        }
        text += summary.humanText
        if let cause = result.stopCause { text += "stopped: \(cause.message)\n" }
        var files = [("results", directory + "/results.jsonl.zst"), (deadList.label, directory + "/" + deadList.file),
                     ("summary", directory + "/summary.json")]
        let page = directory + "/" + ReportPageFile.name
        if FileManager.default.fileExists(atPath: page) { files.append(("report", page)) }
        // The paths in one column, after the longest name ("dead tokens:", "dead channels:") and a space.
        let width = files.map(\.0.count).max().map { $0 + 2 } ?? 0
        for (name, path) in files { text += (name + ":").padding(toLength: width, withPad: " ", startingAt: 0) + path + "\n" }
        writeStandardOutput(text)
        if let cause = result.stopCause { writeStandardError("stopped: \(cause.message)\n") }
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}
