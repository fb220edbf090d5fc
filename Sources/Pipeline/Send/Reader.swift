import Transport
#if canImport(Glibc)
import Glibc
#endif

/// The reader thread: rows (CSV, or from memory) → jobs for the workers, rejected rows straight
/// to the writer. After a stop, it keeps reading so that every remaining row is still recorded (as
/// the stop cause says), because every row must appear in the result log exactly once.
///
/// Generic over its source, not an existential: the file path's reader is specialized for
/// `CSVSource` and pays nothing for the other source.
final class Reader<Source: RowSource>: Sendable {
    private let source: ThreadBound<Source>
    private let shared: CampaignShared
    private let writer: ResultWriter
    /// `--resume`: rows already recorded, skipped here; nil otherwise. Rows of other shards
    /// (`--shard`) are skipped before them, and not counted.
    private let done: DoneRows?
    /// Grown to cover a batch's rows before they are handed on (the workers mark them as sent).
    private let sentRows: SentRows?
    /// Rows a crash lost that `--no-resend-lost` withholds: recorded `gave_up` `LostInCrash`, unsent.
    private let withheld: DoneRows?
    /// The duplicate-token check; nil with `--allow-duplicates`.
    private let duplicates: ThreadBound<DuplicateTokens>?
    /// Where the `environment` and `key_id` columns are, for a run with several credentials.
    private let columns: Campaign.GroupColumns?

    init(source: ThreadBound<Source>, shared: CampaignShared, writer: ResultWriter, done: DoneRows?,
         sentRows: SentRows?, withheld: DoneRows? = nil, duplicates: ThreadBound<DuplicateTokens>? = nil,
         columns: Campaign.GroupColumns? = nil) {
        self.source = source
        self.columns = columns
        self.duplicates = duplicates
        self.shared = shared
        self.writer = writer
        self.done = done
        self.sentRows = sentRows
        self.withheld = withheld
    }

    func run() {
        let decoder = shared.decoder
        // Optional as `decode` takes it: wrapping it there was a retain and a release per row.
        let memo: RowHeadersMemo? = RowHeadersMemo()
        let spares: JobSpares? = JobSpares(pool: decoder.jobPool)
        let done = self.done
        let withheld = self.withheld
        let duplicates = self.duplicates?.value
        let shard = shared.configuration.shard
        // Read for every row: through `shared` it was a retain and a release of the control each time.
        let control = shared.control
        var rows = 0
        /// The last row number read (`rows` leaves out the rows a resumed run skips).
        var lastRow = 0
        var jobs: [Job] = []
        var records: [RowResult] = []
        var liveActivityRules = LiveActivityRuleNotes()
        // Several credentials: each row to its group's queue (nil, and one test a row, otherwise).
        var groups = shared.router.map { router in
            GroupHandOff(groups: shared.groups, router: router, environmentSlot: columns?.environmentSlot,
                         keyIDSlot: columns?.keyIDSlot, labelsRecords: shared.labels != nil, rows: columns?.rows)
        }
        do {
            while let batch = try source.value.nextBatch() {
                if let last = batch.numbers.last {
                    if let sentRows, !sentRows.cover(last), !control.isStopping {
                        // Unmarked rows would be sent unseen by a resume: none is sent.
                        control.stop(.outputFailed(detail: "cannot grow \(SentRows.fileName) in the output directory: "
                                                       + String(cString: strerror(errno))))
                    }
                    lastRow = last
                }
                for index in batch.indices {
                    if let shard, !shard.owns(batch, at: index) { continue }
                    if let done, done.contains(batch.number(at: index)) {
                        // A row recorded before a crash was seen: a later copy is still a duplicate.
                        if let duplicates, case .send(let job) = decoder.decode(batch, at: index) {
                            _ = duplicates.firstRow(of: job, topic: DuplicateTokens.ownTopic(batch, at: index))
                        }
                        continue
                    }
                    rows += 1
                    if let withheld, withheld.contains(batch.number(at: index)) {
                        records.append(RowResult(row: batch.number(at: index), deviceToken: batch.field(.deviceToken, at: index) ?? [],
                                                 outcome: .gaveUp, reason: LocalReason.lostInCrash.rawValue))
                        if let duplicates, case .send(let job) = decoder.decode(batch, at: index) {
                            _ = duplicates.firstRow(of: job, topic: DuplicateTokens.ownTopic(batch, at: index))
                        }
                        continue
                    }
                    switch decoder.decode(batch, at: index, memo: memo, spares: spares) {
                    case .rejected(let reason):
                        records.append(RowResult(row: batch.number(at: index), deviceToken: batch.field(.deviceToken, at: index) ?? [],
                                                 outcome: .rejected, reason: reason))
                    case .breaksLiveActivityRule(let rule):
                        records.append(liveActivityRules.record(row: batch.number(at: index),
                                                                deviceToken: batch.field(.deviceToken, at: index) ?? [],
                                                                breaking: rule, warn: shared.warn))
                    case .send(let job):
                        // Chained, not bound by `if let`: a binding is a retain and a release per row.
                        if let first = duplicates?.firstRow(of: job, topic: DuplicateTokens.ownTopic(batch, at: index)) {
                            records.append(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .rejected,
                                                     reason: DuplicateTokens.reason, duplicateOf: first))
                            continue
                        }
                        if groups != nil {
                            groups?.route(job, batch, at: index, topic: job.headers?.values.topic ?? decoder.defaults.topic,
                                          records: &records, warn: shared.warn)
                            continue
                        }
                        // The flag is one atomic load; the cause behind it takes a lock, so only
                        // a stopping run reads it.
                        if control.isStopping {
                            records.append(shared.stop.record(job))
                        } else {
                            jobs.append(consume job)
                        }
                    }
                }
                hand(&jobs, &records)
                groups?.hand(shouldStop: { [control = shared.control] in control.isStopping })
            }
        } catch {
            // Only without the prescan can a line fail mid-run: the rows before it were handed out
            // and are sent as usual; the row at it is aborted (InputError); the rest cannot be read.
            // A row that could not be read has no token to hash: one shard, by its number, records it.
            if let stop = source.value.stoppedAt, shard.map({ (lastRow + 1) % $0.count == $0.index }) ?? true {
                rows += 1
                records.append(stop.record(row: lastRow + 1))
            }
        }
        hand(&jobs, &records)
        if var groups {
            groups.finish()
            shared.noCredentials.withLock { $0 = groups.noCredentials.rows }
        }
        shared.work.close()
        shared.stop.recordQueuedWork()
        writer.rowsRead.store(rows, ordering: .releasing)
        // The writer may be waiting for a full batch of records that will never come.
        shared.outcomes.wakeConsumer()
    }

    private func hand(_ jobs: inout [Job], _ records: inout [RowResult]) {
        if !records.isEmpty { shared.outcomes.put(moving: &records) }
        records.removeAll(keepingCapacity: true)
        if !jobs.isEmpty {
            shared.work.put(moving: &jobs)
            // The queue closed first: these rows are recorded as the stop says.
            shared.stop.recordAndHand(jobs)
        }
        jobs.removeAll(keepingCapacity: true)
        // The watch may have emptied the queue before these jobs went in.
        shared.stop.recordQueuedWork()
    }
}
