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
    /// The prescan's row count, if there was one.
    private let expectedRows: Int?
    @exclusivity(unchecked) private(set) var summary: Summary
    @exclusivity(unchecked) private(set) var writeError: String?

    /// Rows the reader produced; -1 until the reader is done.
    let rowsRead = Atomic<Int>(-1)
    let recorded = Atomic<Int>(0)

    init(queue: HandOffQueue<RowResult>, outputDirectory: String, expectedRows: Int?, control: RunControl,
         showProgress: Bool, startedAt: ContinuousClock.Instant) throws {
        self.queue = queue
        self.control = control
        self.startedAt = startedAt
        self.expectedRows = expectedRows
        log = try ResultLog(path: outputDirectory + "/results.jsonl.zst")
        deadTokens = try DeadTokenReport(path: outputDirectory + "/dead-tokens.csv")
        summary = Summary(rows: expectedRows ?? 0)
        progress = showProgress ? ProgressLine(expectedRows: expectedRows, startedAt: startedAt) : nil
    }

    /// Runs on the writer thread until every row is recorded.
    func run() {
        var batch: [RowResult?] = []
        batch.reserveCapacity(4096)
        var count = 0
        while true {
            batch.removeAll(keepingCapacity: true)
            // Woken per 1,024 records rather than per worker hand-off (a context switch each, on
            // the client's one core), or after 50 ms, or sooner for the run's last rows.
            let known = rowsRead.load(ordering: .acquiring)
            let total = known >= 0 ? known : expectedRows
            let wanted = total.map { Swift.max(1, Swift.min(1024, $0 - count)) } ?? 1024
            let open = queue.waitForBatch(min: wanted, max: 4096, timeoutSeconds: 0.05, into: &batch)
            // Each record moves out into a local and is lent from there: iterating the array, or
            // lending a record in place, copies it (a retain and release of each of its references).
            for index in batch.indices {
                guard let record = batch[index].take() else { continue }
                write(record)
            }
            count += batch.count
            recorded.store(count, ordering: .releasing)
            let now = ContinuousClock.now
            flushIfDue(now)
            progress?.update(done: count, counts: summary.counts, now: now)
            let expected = rowsRead.load(ordering: .acquiring)
            if (expected >= 0 && count >= expected) || !open { break }
        }
        progress?.finish(done: count, counts: summary.counts)
        finishFiles()
    }

    private func write(_ record: borrowing RowResult) {
        summary.add(record)
        guard writeError == nil else { return }
        do {
            try log.append(record)
            if record.outcome.isDeadToken { try deadTokens.add(record) }
        } catch {
            fail("\(error)")
        }
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
