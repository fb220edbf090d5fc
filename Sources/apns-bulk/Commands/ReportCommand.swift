import ArgumentParser
import Pipeline
import Report

/// `apns-bulk report`: counts over one or more result logs (shards), and the merged dead-token list.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Count outcomes in results.jsonl.zst files, merge their dead tokens, and write an HTML report.",
        usage: """
            apns-bulk report <logs> ... [--dead-tokens <file>] [--json]
                                    [--html <file>]
                   apns-bulk report --html <file> --compare <a> <b>
            """)

    @Argument(help: "One or more results.jsonl.zst files, or --out directories that hold one.") var logs: [String] = []
    @Option(help: "Write the merged dead-token list here: one line per token, with its latest unregistered_at; for broadcast logs, the merged dead-channels list, one line per channel. Default: none; no list is written.")
    var deadTokens: String?
    @Flag(help: "Print a machine-readable JSON summary.") var json = false
    @Option(help: "Write one HTML page about the logs here: several shards' logs make one campaign page. The sidecar and summary.json beside each log are read when they are there. Default: none; no page is written.")
    var html: String?
    @Option(parsing: .upToNextOption, help: "Compare two runs on one page (with --html): each a results.jsonl.zst or an --out directory. Give no other logs with it. Default: none; no comparison.")
    var compare: [String] = []

    func validate() throws {
        if !compare.isEmpty {
            guard compare.count == 2 else { throw ValidationError("--compare takes exactly two runs (result logs or --out directories), got \(compare.count)") }
            guard logs.isEmpty else { throw ValidationError("--compare A B compares two runs; give no other logs with it (got \(logs.joined(separator: " ")))") }
            guard html != nil else { throw ValidationError("--compare writes a page: give --html FILE too") }
            return
        }
        guard !logs.isEmpty else { throw ValidationError("give at least one results.jsonl.zst file") }
    }

    func run() throws {
        if !compare.isEmpty, let html { return try ReportHTML.compare(compare[0], compare[1], to: html) }
        let merge = DeadTokenMerge()
        let overlap = RowOverlap()
        var tallies: [ResultLogTally] = []
        for path in logs.map(ReportRun.logPath) {
            do {
                tallies.append(try ResultLogTally.read(path: path) { record in
                    merge.add(record)
                    overlap.add(record, path: path)
                })
            } catch {
                throw RunFailure.usage(error.description)
            }
        }
        for tally in tallies {
            if let cut = tally.cutFrame {
                writeStandardError("apns-bulk: \(tally.path): the last zstd frame (frame \(cut.frame), \(cut.bytes) bytes) is cut, "
                                   + "as a crash leaves it: counted the \(cut.recordsRead) complete records it still holds; "
                                   + "skipped \(cut.incompleteLineBytes) bytes of an incomplete line (that record and any after it "
                                   + "were lost when the run stopped)\n")
            }
        }
        if let warning = overlap.warning { writeStandardError("apns-bulk: \(warning)\n") }
        if merge.otherKindRecords > 0 {
            throw RunFailure.usage("the logs mix a broadcast's records (channel_id) and device pushes' (device_token): "
                                   + "report them separately")
        }
        if let deadTokens {
            do { try merge.write(to: deadTokens) } catch { throw RunFailure.usage(error.description) }
        }
        if let html { try ReportHTML.campaign(logs, to: html) }
        var total = OutcomeCounts()
        for tally in tallies { total.add(tally.counts) }
        let channels = merge.kind == .broadcast
        print(json ? jsonText(tallies, total: total, deadTokenCount: merge.count, repeatedRows: overlap.repeatedRows,
                              channels: channels)
                   : humanText(tallies, total: total, deadTokenCount: merge.count, repeatedRows: overlap.repeatedRows,
                               channels: channels),
              terminator: "")
    }

    /// A broadcast's logs list dead channels, not tokens.
    private func deadListName(human: Bool, channels: Bool) -> String {
        human ? (channels ? "dead channels" : "dead tokens") : (channels ? "dead_channels" : "dead_tokens")
    }

    private func countsText(_ counts: OutcomeCounts) -> String {
        "rows \(counts.total) " + Outcome.allCases.map { "\($0.rawValue) \(counts[$0])" }.joined(separator: " ")
    }

    private func humanText(_ tallies: [ResultLogTally], total: OutcomeCounts, deadTokenCount: Int, repeatedRows: Int,
                           channels: Bool) -> String {
        var lines = tallies.map { tally in
            "\(tally.path): \(countsText(tally.counts))" + (tally.cutFrame.map { cut in
                " (cut last frame: \(cut.recordsRead) records read, skipped \(cut.incompleteLineBytes) bytes of an incomplete line)"
            } ?? "")
        }
        lines.append("total: \(countsText(total))")
        if repeatedRows > 0 { lines.append("repeated rows: \(repeatedRows) records for a row number met in an earlier record (see the warning)") }
        lines.append("\(deadListName(human: true, channels: channels)): \(deadTokenCount)" + (deadTokens.map { " (written to \($0))" } ?? ""))
        return lines.joined(separator: "\n") + "\n"
    }

    private func countsJSON(_ counts: OutcomeCounts) -> String {
        "\"rows\": \(counts.total), " + Outcome.allCases.map { "\"\($0.rawValue)\": \(counts[$0])" }.joined(separator: ", ")
    }

    private func jsonText(_ tallies: [ResultLogTally], total: OutcomeCounts, deadTokenCount: Int, repeatedRows: Int,
                          channels: Bool) -> String {
        let files = tallies.map { tally in
            var path: [UInt8] = []
            JSONText.appendString(tally.path, to: &path)
            return "    {\"path\": \(String(decoding: path, as: UTF8.self)), \(countsJSON(tally.counts)), "
                + "\"skipped_bytes\": \(tally.cutFrame?.bytes ?? 0), "
                + "\"cut_frame_records\": \(tally.cutFrame?.recordsRead ?? 0), "
                + "\"incomplete_line_bytes\": \(tally.cutFrame?.incompleteLineBytes ?? 0)}"
        }
        return "{\n  \"files\": [\n" + files.joined(separator: ",\n") + "\n  ],\n"
            + "  \"total\": {\(countsJSON(total))},\n  \"\(deadListName(human: false, channels: channels))\": \(deadTokenCount),\n"
            + "  \"repeated_rows\": \(repeatedRows)\n}\n"
    }
}
