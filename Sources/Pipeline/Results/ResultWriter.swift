import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The writer thread's work: takes every final record from the outcome queue and writes the
/// result log and dead-token report, counts the summary, and draws the progress line. It ends when
/// it has recorded as many rows as the reader read (known once the reader is done).
final class ResultWriter: @unchecked Sendable {
    // Set up before the thread starts and read only by it afterwards, except the atomics.
    private let queue: HandOffQueue<RowResult>
    private let log: ResultLog
    private let deadTokens: DeadTokenReport
    private let control: RunControl
    private let progress: ProgressLine?
    private let startedAt: ContinuousClock.Instant
    /// This run's share of the prescan's row count, if there was one.
    private let expectedRows: Int?
    /// Rows recorded by the campaign's earlier runs (`--resume`).
    private let carriedRows: Int
    private let campaignDirectory: CampaignDirectory?
    /// The caller's outcome callback (`Campaign(configuration:onOutcome:)`), called here on the
    /// writer thread after each record is written; nil costs one test per batch.
    private let onOutcome: Campaign.OutcomeHandler?
    /// Gets the summary's counts once a second (`RunRecorder.tick`), on this thread.
    private let recorder: RunRecorder?
    /// Several credentials or environments in play: what records' lanes name.
    private let labels: RecordLabels?
    /// Each credential group's BadDeviceToken records held until its environment is proven.
    private let proofs: [EnvironmentProof]
    /// A device push's records, or a broadcast's (their lines and dead list differ).
    private let kind: ResultRecord.Kind
    @exclusivity(unchecked) private(set) var summary: Summary
    /// `summary.groups`' counts while the writer runs (folded in when it is done).
    @exclusivity(unchecked) private var groupTally: GroupCountsTally?
    @exclusivity(unchecked) private(set) var writeError: String?
    /// The summary's latencies again, coarse, for the `RunRecorder` (a resumed campaign's included).
    @exclusivity(unchecked) private(set) var latencyBuckets = LatencyBuckets()

    /// Rows the reader produced (rows a resumed run skips not included); -1 until the reader is done.
    let rowsRead = Atomic<Int>(-1)
    let recorded = Atomic<Int>(0)

    /// `directory`: the campaign's `--out`, held (and its lock with it) until the writer goes;
    /// when resumed, its earlier runs' records are kept in this run's files and summary.
    init(queue: HandOffQueue<RowResult>, outputDirectory: String, expectedRows: Int?, control: RunControl,
         showProgress: Bool, startedAt: ContinuousClock.Instant, directory: CampaignDirectory? = nil,
         onOutcome: Campaign.OutcomeHandler? = nil, pace: Double? = nil, recorder: RunRecorder? = nil,
         labels: RecordLabels? = nil, waiting: (@Sendable () -> String?)? = nil,
         proofs: [EnvironmentProof] = [], kind: ResultRecord.Kind = .deviceToken) throws {
        self.kind = kind
        self.labels = labels
        self.proofs = proofs
        self.onOutcome = onOutcome
        self.recorder = recorder
        let resumed = directory?.resumed
        campaignDirectory = directory
        self.queue = queue
        self.control = control
        self.startedAt = startedAt
        // This run's rows: the campaign's less those recorded before.
        let carried = resumed?.done.count ?? 0
        self.expectedRows = expectedRows.map { Swift.max(0, $0 - carried) }
        self.carriedRows = carried
        if let resumed {
            log = try ResultLog(path: outputDirectory + "/results.jsonl.zst", appendingAfter: resumed.keptBytes)
            deadTokens = resumed.deadTokens
            summary = resumed.summary
            summary.rows = expectedRows ?? carried
        } else {
            log = try ResultLog(path: outputDirectory + "/results.jsonl.zst")
            deadTokens = try DeadTokenReport(path: CampaignDirectory.deadTokensPath(outputDirectory, kind: kind), kind: kind)
            summary = Summary(rows: expectedRows ?? 0)
        }
        log.labels = labels
        log.kind = kind
        if labels != nil && summary.groups == nil { summary.groups = GroupCounts() }
        groupTally = labels.map { GroupCountsTally(lanes: $0.lanes.count) }
        progress = showProgress ? ProgressLine(expectedRows: self.expectedRows, startedAt: startedAt, pace: pace,
                                               waiting: waiting) : nil
        // Here rather than on the writer thread: a campaign's exporters, started before that thread,
        // find a resumed campaign's earlier rows in the totals from their first look.
        if carried > 0 { latencyBuckets = LatencyBuckets(summary.latency) }
        recorder?.begin(summary: summary, latency: latencyBuckets)
    }

    /// Runs on the writer thread until every row is recorded.
    func run() {
        var count = 0
        while true {
            // Woken per 1,024 records rather than per worker hand-off (a context switch each, on
            // the client's one core), or after 50 ms, or sooner for the run's last rows.
            let known = rowsRead.load(ordering: .acquiring)
            let total = known >= 0 ? known : expectedRows
            let wanted = total.map { Swift.max(1, Swift.min(1024, $0 - count)) } ?? 1024
            // Each record moves out of the queue's slot to the closure and is lent from there:
            // lending a record in place copies it (a retain and release of each of its references).
            let (lent, open) = if let onOutcome {
                queue.lend(min: wanted, max: 4096, timeoutSeconds: 0.05) { record in
                    write(record)
                    onOutcome(labelled(record))
                }
            } else {
                queue.lend(min: wanted, max: 4096, timeoutSeconds: 0.05) { record in write(record) }
            }
            count += lent
            if !proofs.isEmpty { count += judgeHeldRows(recorded: count) }
            recorded.store(count, ordering: .releasing)
            let now = ContinuousClock.now
            flushIfDue(now)
            recorder?.tick(now: now, summary: summary, latency: latencyBuckets, recorded: carriedRows + count)
            progress?.update(done: count, counts: summary.counts, now: now)
            let expected = rowsRead.load(ordering: .acquiring)
            if (expected >= 0 && count >= expected) || !open { break }
        }
        if let labels, let groupTally, summary.groups != nil { groupTally.fold(into: &summary.groups!, labels: labels) }
        progress?.finish(done: count, counts: summary.counts)
        if carriedRows > 0 { summary.rows = Swift.max(summary.rows, carriedRows + Swift.max(0, rowsRead.load(ordering: .acquiring))) }
        finishFiles()
    }

    private func write(_ record: borrowing RowResult) {
        summary.add(record)
        if let labels, record.lane | UInt16(record.environmentCode | record.fallbackFrom) != 0 {
            groupTally?.add(record.outcome, lane: record.lane, environmentCode: record.environmentCode,
                            fallbackFrom: record.fallbackFrom)
            if record.outcome.isDeadToken, let environment = labels.fields(of: record).environment {
                summary.detail.addDead(reason: record.reason, environment: environment)
            }
        }
        if let latency = record.latencyMs, record.status != 0 { latencyBuckets.record(milliseconds: latency) }
        guard writeError == nil else { return }
        do {
            try log.append(record)
            if deadTokens.mayList(record.outcome) { try deadTokens.add(record) }
        } catch {
            fail("\(error)")
        }
    }

    /// Every row has its record but those a group still holds (`EnvironmentProof`): no answer
    /// can prove that group's environment any more, so they end `aborted` `WrongEnvironment`,
    /// recorded here. Returns how many.
    private func judgeHeldRows(recorded count: Int) -> Int {
        let expected = rowsRead.load(ordering: .acquiring)
        guard expected >= 0, count < expected else { return 0 }
        let held = proofs.reduce(0) { $0 + $1.heldRows }
        guard held > 0, count + held >= expected else { return 0 }
        var ended = 0
        for proof in proofs {
            for record in proof.judgeAtEnd() {
                write(record)
                onOutcome?(labelled(record))
                ended += 1
            }
        }
        return ended
    }

    /// The record as the callback gets it, with its group's labels.
    private func labelled(_ result: borrowing RowResult) -> ResultRecord {
        var record = result.record
        record.kind = kind
        if let labels {
            (record.environment, record.keyID, record.environmentFallbackFrom) = labels.fields(of: result)
        }
        return record
    }

    private func flushIfDue(_ now: ContinuousClock.Instant) {
        guard writeError == nil else { return }
        do { try log.flushIfDue(now: now) } catch { fail("\(error)") }
    }

    private func finishFiles() {
        do {
            try log.close()
            try deadTokens.close()
        } catch {
            if writeError == nil { fail("\(error)") }
        }
    }

    /// A full disk or a vanished directory: nothing more can be recorded, so sending more would
    /// lose track of rows. Stop the run; the rows are still counted in the summary.
    private func fail(_ detail: String) {
        writeError = detail
        control.stop(.outputFailed(detail: "cannot write the result files: \(detail)"))
    }
}
