/// The one owner of what a stop does to the rows not yet done: every row that is queued, in flight
/// or not yet read when the run stops ends with the record its `StopCause` gives it, and every
/// place that holds rows (the reader, the work queue, each worker's ready list, retry timers and
/// in-flight table) ends them here, so that what a stop means is decided once.
///
/// Sendable: its state is the run control's (atomics and a lock) and the hand-off queues' own.
final class RunStop: Sendable {
    let control: RunControl
    /// Reader → workers: the jobs still queued when the run stops are recorded from here.
    private let work: HandOffQueue<Job>
    private let outcomes: HandOffQueue<RowResult>
    /// For a credential group's stop (`control` is the group's): the run's control, whose stop
    /// ends the group's rows too.
    private let run: RunControl?

    init(control: RunControl, work: HandOffQueue<Job>, outcomes: HandOffQueue<RowResult>, run: RunControl? = nil) {
        self.control = control
        self.work = work
        self.outcomes = outcomes
        self.run = run
    }

    /// Why the rows end. A worker shutting down after every row was recorded has no cause and no
    /// rows; were a row ever to end that way, it still gets a record (an aborted one).
    var cause: StopCause { control.stopCause ?? run?.stopCause ?? .fatal(detail: "stopped") }

    /// The rows this stop owns end now: its control (or the run's) was told to stop.
    var isStopping: Bool { control.isStopping || run?.isStopping == true }

    /// The record of a row that the stop ends before APNs answered it (again).
    func record(_ job: Job) -> RowResult {
        job.record(stoppedBy: cause)
    }

    /// Ends `jobs` (rows the reader could not hand over, the queue being closed) and hands their
    /// records to the writer.
    func recordAndHand(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        let cause = self.cause
        outcomes.put(jobs.map { $0.record(stoppedBy: cause) })
    }

    /// No job is handed out any more: the work queue closes, and what is still in it ends now.
    /// The reader may be done already, and then nobody else would ever take those jobs.
    func closeWork() {
        work.close()
        recordQueuedWork()
    }

    /// Ends the jobs still waiting in the work queue. Does nothing while the run is not stopping;
    /// safe from any thread, and more than once (a job is taken once).
    func recordQueuedWork() {
        guard isStopping else { return }
        var left: [Job] = []
        work.takeBatch(max: Int.max, into: &left)
        recordAndHand(left)
    }
}
