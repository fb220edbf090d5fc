import Foundation

/// `--out` as a campaign's home: a fresh run claims it (campaign.json first, so a crash at any
/// later point leaves a resumable campaign) and refuses one that holds a campaign already; a
/// `--resume` run checks the input is the campaign's, reads what is recorded, and carries it over.
struct CampaignDirectory {
    /// Set for a resumed campaign; nil for a fresh one.
    let resumed: ResumedLog?
    /// Set when `--resume` found every row recorded: the campaign's summary, and nothing to send.
    let finished: Summary?
    /// The bitmap of rows this run hands to a connection (nil only when finished).
    let sentRows: SentRows?
    /// Held for the whole run: no second run uses the directory meanwhile.
    let lock: CampaignLock
    /// The input's fingerprint as campaign.json records it (summary.json repeats it); nil for a stream.
    var fingerprint: InputFingerprint?
    /// Rows a crash lost that `--no-resend-lost` withheld (now or in an earlier resume) and that
    /// have no record yet: the reader records them `gave_up` `LostInCrash`, unsent. Nil when none.
    var withheld: DoneRows? = nil
    /// A word for stderr about the crash being resumed from, when there is one to say.
    var notice: String? = nil

    static func recordPath(_ directory: String) -> String { directory + "/campaign.json" }
    static func logPath(_ directory: String) -> String { directory + "/results.jsonl.zst" }
    /// dead-tokens.csv, or a broadcast's dead-channels.csv.
    static func deadTokensPath(_ directory: String, kind: ResultRecord.Kind = .deviceToken) -> String {
        directory + "/" + (kind == .broadcast ? BroadcastCampaign.deadChannelsFile : "dead-tokens.csv")
    }

    /// Checks `--out` before the input is read: refuses a campaign's directory without
    /// `--resume`, and with it a different input or one that is not a regular file, and a
    /// directory another run holds. Writes nothing but the directory itself.
    static func check(_ configuration: CampaignConfiguration) throws(CampaignDirectoryError) -> Claim {
        let directory = configuration.outputDirectory
        let lock = try CampaignLock(directory: directory)
        let hasRecord = access(recordPath(directory), F_OK) == 0, hasLog = holdsRecords(logPath(directory))
        guard configuration.resume else {
            if hasRecord || hasLog {
                throw .campaignExists(directory: directory, found: (hasRecord ? ["campaign.json"] : []) + (hasLog ? ["results.jsonl.zst"] : []))
            }
            return Claim(configuration: configuration, fingerprint: nil, record: nil, lock: lock)
        }
        let fingerprint = try InputFingerprint.of(path: configuration.inputPath)
        guard hasRecord else {
            if hasLog { throw .logWithoutRecord(directory: directory) }
            return Claim(configuration: configuration, fingerprint: fingerprint, record: nil, lock: lock)
        }
        let record = try CampaignRecord.read(path: recordPath(directory))
        guard let recorded = record.fingerprint else {
            throw .recordedInputNotRegular(directory: directory, recordedPath: record.input)
        }
        guard recorded == fingerprint else {
            throw .differentInput(directory: directory, recordedPath: record.input, path: configuration.inputPath)
        }
        guard record.shard == configuration.shard?.description else {
            throw .differentShard(directory: directory, recorded: record.shard, given: configuration.shard?.description)
        }
        return Claim(configuration: configuration, fingerprint: fingerprint, record: record, lock: lock)
    }

    /// Whether a result log is there with something in it: an empty file (a run that died before
    /// its first flush) or a device (a test's /dev/full) records no row.
    private static func holdsRecords(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && status.st_size > 0
    }

    /// A checked `--out`, taken once the input has passed its own checks.
    struct Claim {
        let configuration: CampaignConfiguration
        let fingerprint: InputFingerprint?
        /// The campaign being resumed; nil for a fresh one.
        let record: CampaignRecord?
        let lock: CampaignLock

        /// Starts the campaign (campaign.json first) or carries the recorded one over.
        /// `expectedRows` is the prescan's count, when there was one; `members`, a sharded
        /// prescan's rows of this shard (a shard's log holds only those).
        func take(expectedRows: Int?, members: DoneRows? = nil) throws(CampaignDirectoryError) -> CampaignDirectory {
            let directory = configuration.outputDirectory
            let inFlightLimit = configuration.connections * configuration.maxStreams
            guard var record else {
                let print = try start(configuration, inFlightLimit: inFlightLimit, fingerprint: fingerprint)
                return CampaignDirectory(resumed: nil, finished: nil,
                                         sentRows: try SentRows(directory: directory, run: 1, rows: expectedRows), lock: lock,
                                         fingerprint: print)
            }
            let log = try ResumedLog.load(logPath: logPath(directory),
                                          deadTokensPath: deadTokensPath(directory, kind: configuration.recordKind),
                                          kind: configuration.recordKind)
            if let rows = expectedRows, Self.everyRowDone(log, rows: rows, members: members) {
                return CampaignDirectory(resumed: nil, finished: try finish(log, rows: rows, record: record), sentRows: nil, lock: lock,
                                         fingerprint: fingerprint)
            }
            // In this order, so that a crash between any two steps is counted once and withholds
            // for good: the withheld rows, then campaign.json (the count, and the run that owns
            // `sent-rows` from now on), then this run's own `sent-rows`.
            var withheld = CrashLoss.withheld(directory: directory)
            let lost = CrashLoss.rows(directory: directory, run: record.runs, log: log, withheld: withheld)
            let notice = CrashLoss.forgetOldMark(directory: directory,
                                                 newerRunRecorded: access(directory + "/" + SentRows.fileName, F_OK) == 0)
            if configuration.noResendLost && lost.count > 0 {
                withheld = withheld.union(lost)
                try CrashLoss.writeWithheld(withheld, directory: directory)
            } else {
                record.resentAfterCrash += lost.count
            }
            record.inFlightLimit = inFlightLimit
            record.runs += 1
            try record.write(path: recordPath(directory))
            log.summary.resentAfterCrash = record.resentAfterCrash
            return CampaignDirectory(resumed: log, finished: nil,
                                     sentRows: try SentRows(directory: directory, run: record.runs, rows: expectedRows),
                                     lock: lock, fingerprint: fingerprint,
                                     withheld: Self.unrecorded(withheld, log), notice: notice)
        }

        /// The withheld rows still without a record; nil when none.
        private static func unrecorded(_ withheld: DoneRows, _ log: ResumedLog) -> DoneRows? {
            let rows = withheld.subtracting(log.done)
            return rows.count > 0 ? rows : nil
        }

        /// Whether every row of the campaign (of the shard, with `members`) has its record.
        private static func everyRowDone(_ log: ResumedLog, rows: Int, members: DoneRows?) -> Bool {
            guard let members else { return log.done.missing(through: rows) == 0 }
            return members.count(notIn: log.done, DoneRows(), through: members.highest) == 0
        }

        /// Every row is recorded: the summary says so, and is written if a crash came before it.
        private func finish(_ log: ResumedLog, rows: Int, record: CampaignRecord) throws(CampaignDirectoryError) -> Summary {
            var summary = log.summary
            summary.rows = rows
            summary.carriedRows = rows
            summary.resentAfterCrash = record.resentAfterCrash
            summary.exitStatus = 0
            summary.input = configuration.inputPath
            summary.fingerprint = fingerprint
            summary.shard = configuration.shard
            let directory = configuration.outputDirectory
            do { try log.deadTokens.close() } catch { throw .output(path: deadTokensPath(directory), detail: error.description) }
            let summaryPath = directory + "/summary.json"
            if access(summaryPath, F_OK) != 0 {
                do { try OutputFile.write(Array(summary.json.utf8), to: summaryPath) } catch {
                    throw .output(path: summaryPath, detail: String(cString: strerror(error.errno)))
                }
            }
            return summary
        }
    }

    /// Returns the input's fingerprint, as campaign.json now records it.
    private static func start(_ configuration: CampaignConfiguration, inFlightLimit: Int,
                              fingerprint: InputFingerprint? = nil) throws(CampaignDirectoryError) -> InputFingerprint? {
        let directory = configuration.outputDirectory
        do {
            try OutputFile.createDirectory(directory)
        } catch {
            throw .output(path: directory, detail: error.detail ?? String(cString: strerror(error.errno)))
        }
        // A pipe or stdin has no fingerprint: the campaign runs, and cannot be resumed.
        // Rows from memory have none either: `inputPath` is only their name.
        let print = configuration.rowsInMemory ? nil : fingerprint ?? (try? InputFingerprint.of(path: configuration.inputPath))
        try CampaignRecord(input: configuration.inputPath, fingerprint: print, inFlightLimit: inFlightLimit,
                           shard: configuration.shard?.description)
            .write(path: recordPath(directory))
        return print
    }
}
