import Transport

/// A worker's ends of the pipeline's queues, the same for the HTTP/2 `Worker` and the binary
/// `BinaryWorker`: each row's final record goes to the writer (the outcome queue), each spent job
/// back to the reader (`JobPool`), the worker's ready list is refilled from its work queue, and
/// retries wait here on their backoff. When the run stops, every job the worker holds back ends
/// here, as the stop says (`endHeldJobs`). Each worker owns one, on its reactor's thread.
///
/// What it costs: records go out in batches, at 512 or once per reactor turn at most
/// (`schedulePublish`), so the writer's queue lock is taken once per batch, not per row; they wait
/// in a `HandOffBatch`, which moves them into the queue's slots by the run (a record is ~230 bytes:
/// an array would copy each twice on the way out). Spent jobs go back 256 at a time (`SpentJobs`),
/// and jobs come from the work queue 256 at a time: one lock per 256 rows each way. An empty take
/// asks the work queue, once, to wake the worker at its next put: a waiting worker never polls.
// Confined to its reactor's thread: it crosses threads only inside `reactor.execute` closures,
// which run on that thread.
final class WorkerOutbox: @unchecked Sendable {
    /// Records published at once when this many wait.
    static let batchSize = 512
    /// Jobs taken from the work queue at a time.
    static let takeSize = 256

    private let reactor: Reactor
    private let outcomes: HandOffQueue<RowResult>
    private let jobPool: JobPool
    /// Records on their way to the writer (`publish`).
    @exclusivity(unchecked) private var finished = HandOffBatch<RowResult>(capacity: WorkerOutbox.batchSize)
    /// Jobs whose rows ended here, on their way back to the reader.
    @exclusivity(unchecked) private var spentJobs = SpentJobs()
    @exclusivity(unchecked) private var publishScheduled = false
    @exclusivity(unchecked) private var waitingForWork = false
    /// Jobs waiting on a backoff, by row, with their timers.
    @exclusivity(unchecked) private var retryTimers: [UInt64: (TimerID, Job)] = [:]

    /// The worker's, called on the reactor's thread: work came into the queue an empty `refill` found.
    var workArrived: () -> Void = {}

    init(reactor: Reactor, outcomes: HandOffQueue<RowResult>, jobPool: JobPool) {
        self.reactor = reactor
        self.outcomes = outcomes
        self.jobPool = jobPool
    }

    // MARK: - Records to the writer

    /// `record` is the row's last word: it goes to the writer with the next batch.
    func finish(_ record: consuming RowResult) {
        finished.append(consume record)
        if finished.count >= Self.batchSize { publish() }
    }

    /// Publishes at the end of this reactor turn (once, however often asked).
    func schedulePublish() {
        guard !publishScheduled else { return }
        publishScheduled = true
        reactor.execute { [unowned self] in
            publishScheduled = false
            publish()
        }
    }

    /// Hands every finished record to the writer now, in order (waiting while its queue is full).
    func publish() {
        guard !finished.isEmpty else { return }
        outcomes.put(moving: &finished)
    }

    // MARK: - Jobs

    /// A job whose record is made (`takeDeviceToken()`) goes back to the reader for a new row.
    func recycle(_ job: consuming Job) {
        if spentJobs.keep(consume job) { spentJobs.hand(to: jobPool) }
    }

    /// Moves up to `takeSize` jobs from `work` to the back of `ready`; returns how many. When none
    /// came and more may, `workArrived` is called (once) after the queue's next put.
    func refill(_ ready: inout JobQueue, from work: HandOffQueue<Job>) -> Int {
        let taken = ready.takeBatch(from: work, max: Self.takeSize)
        if taken == 0 && !waitingForWork && !work.isClosed {
            waitingForWork = true
            let reactor = self.reactor
            work.callWhenAvailable { [unowned self] in
                reactor.execute { [unowned self] in
                    waitingForWork = false
                    workArrived()
                }
            }
        }
        return taken
    }

    /// Holds `job` for `delay` milliseconds, then hands it to `due` (unless a stop ended it first).
    /// A backoff may be long: what waits is a copy with bytes of its own (`detached()`), so the CSV
    /// batch the row came from can go meanwhile.
    func holdForRetry(_ job: Job, milliseconds delay: Int, then due: @escaping (Job) -> Void) {
        let job = job.detached()
        let tag = UInt64(job.row)
        let timer = reactor.schedule(after: .milliseconds(delay)) { [self] in
            guard let (_, job) = retryTimers.removeValue(forKey: tag) else { return }
            due(job)
        }
        retryTimers[tag] = (timer, job)
    }

    /// Some retry waits on its backoff.
    var holdsRetries: Bool { !retryTimers.isEmpty }

    /// The run is stopping: every job the worker holds back — `ready`, in order, then the retries
    /// waiting on their backoff (whose timers are cancelled) — ends as `stop` says. Not published:
    /// the caller publishes when it has ended what it holds itself.
    func endHeldJobs(_ ready: inout JobQueue, as stop: RunStop) {
        while let job = ready.popFirst() { finish(stop.record(job)) }
        for (_, entry) in retryTimers {
            reactor.cancel(entry.0)
            finish(stop.record(entry.1))
        }
        retryTimers.removeAll()
    }
}
