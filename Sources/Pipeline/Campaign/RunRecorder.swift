import APNs
import Synchronization

/// The run's record as it goes, fed once and read by every consumer (the Prometheus metrics, and a
/// per-second sidecar file): the hot path pays once.
///
/// Two sources, neither of which takes a lock or touches an atomic per row: the outcomes, reasons
/// and latencies the writer thread counts anyway for the summary (read here on that thread), and
/// each reactor thread's `WorkerCounters` (requests, retries, 429s, GOAWAYs, resets, connections,
/// rows in flight), which its worker hands over about once a second. The writer thread merges them
/// once a second (``tick(now:summary:recorded:)``) into the run's ``Totals`` and that second's
/// ``Second``, and calls each consumer with both; memory stays flat (only the previous totals are
/// kept). ``finish(summary:exitStatus:)`` makes the last call, with `Totals.exitStatus` set.
///
/// Consumers are added with ``onSecond(_:)`` before the run starts (a ``CampaignExporter``, such as
/// the Report module's timeline and metrics, adds its own as the run starts). They run on the writer thread
/// (the last call on the campaign's calling thread), so they must be quick: write a line, hand a
/// text to another thread.
// Shared by the writer, reactor and calling threads; everything mutable is behind its Mutex.
public final class RunRecorder: Sendable {
    /// One second of the run (or more, when the writer was held up: `seconds`; a quarter of one in
    /// the run's first minute, `fineSlice`).
    public struct Second: Sendable {
        /// Its number, increasing: whole seconds from the start of sending to its end, or more (each
        /// quarter of the first minute counts one).
        public var index: Int
        /// How long it covers (about 1, or 0.25 in the first minute; the last one may be shorter).
        public var seconds: Double
        /// Its end, in Unix seconds.
        public var endedAtUnix: Double
        /// Rows recorded in it, by outcome and by reason.
        public var outcomes = OutcomeCounts()
        public var byReason: [String: Int] = [:]
        /// Requests, retries, 429s, GOAWAYs, resets, connections opened and closed in it; the
        /// gauges (`connectionsOpen`, `inFlight`) as at its end.
        public var events = WorkerCounters()
        /// The latencies of the rows answered in it.
        public var latency = LatencyBuckets()
        /// The run began stopping (a signal, refused credentials, ...) in this second.
        public var stopBegan = false
    }

    /// The run so far; after ``finish(summary:exitStatus:)``, the whole run.
    public struct Totals: Sendable {
        /// When sending began, in Unix seconds.
        public var startedAtUnix: Double
        /// Rows in the input: the prescan's count, or the rows read once the reader is done.
        public var rows = 0
        /// Rows recorded (including those a resumed campaign's earlier runs recorded).
        public var recorded = 0
        public var outcomes = OutcomeCounts()
        public var byReason: [String: Int] = [:]
        /// Rows that needed more than one request.
        public var retriedRows = 0
        public var events = WorkerCounters()
        public var latency = LatencyBuckets()
        /// The end of the last second in which a row was delivered, in Unix seconds (1 s resolution).
        public var lastSuccessAtUnix: Double?
        /// Connections configured (`--connections`).
        public var connectionsConfigured = 0
        /// The run is stopping, or stopped, before every row was answered.
        public var stopping = false
        /// Set by the last call only.
        public var finishedAtUnix: Double?
        public var exitStatus: Int32?
    }

    public typealias SecondConsumer = @Sendable (Second, Totals) -> Void

    private struct State {
        var workers: [WorkerCounters]
        var consumers: [SecondConsumer] = []
        var totals: Totals
        var startedAt: ContinuousClock.Instant
        var lastTick: ContinuousClock.Instant
        var secondsDone = 0
        var finished = false
    }

    private let state: Mutex<State>
    private let control: RunControl?

    /// A recorder for `workers` reactor threads.
    init(workers: Int, connections: Int, control: RunControl?) {
        self.control = control
        var totals = Totals(startedAtUnix: Double(WallClock.milliseconds()) / 1000)
        totals.connectionsConfigured = connections
        let now = ContinuousClock.now
        state = Mutex(State(workers: Array(repeating: WorkerCounters(), count: workers), totals: totals, startedAt: now,
                            lastTick: now))
    }

    /// Sending starts (the campaign's calling thread, before any other thread of the run).
    func start(at instant: ContinuousClock.Instant) {
        let nowUnix = Double(WallClock.milliseconds()) / 1000
        state.withLock { state in
            state.startedAt = instant
            state.lastTick = instant
            state.totals.startedAtUnix = nowUnix
        }
    }

    /// Adds a consumer, called with every second and the totals after it, and once more at the end.
    public func onSecond(_ consumer: @escaping SecondConsumer) {
        state.withLock { $0.consumers.append(consumer) }
    }

    /// A worker's counters so far (its reactor thread, about once a second, and at its end).
    func publish(worker index: Int, _ counters: WorkerCounters) {
        state.withLock { $0.workers[index] = counters }
    }

    /// The writer, as it is made (before the run's threads and exporters start): a resumed
    /// campaign's earlier rows are in the totals from the start, and in no second of this run.
    func begin(summary: borrowing Summary, latency: LatencyBuckets) {
        let outcomes = summary.counts
        let byReason = summary.byReason
        let rows = summary.rows
        state.withLock { state in
            state.totals.outcomes = outcomes
            state.totals.byReason = byReason
            state.totals.latency = latency
            state.totals.rows = rows
            state.totals.recorded = outcomes.total
        }
    }

    /// For the first `fineSpan` of sending a ``Second`` covers a quarter of a second (`fineSlice`),
    /// so that a short run's report draws more than a few points; after it, a second.
    public static let fineSpan = Duration.seconds(60), fineSlice = Duration.milliseconds(250)

    /// How long the slice that ends after `now` lasts: `fineSlice` early in the run, else a second.
    func slice(at now: ContinuousClock.Instant) -> Duration {
        state.withLock { now - $0.startedAt < Self.fineSpan ? Self.fineSlice : .seconds(1) }
    }

    /// The writer thread, after each batch: a second (or an early quarter, `fineSlice`) is over
    /// when `now` is that far past the last.
    func tick(now: ContinuousClock.Instant, summary: borrowing Summary, latency: LatencyBuckets, recorded: Int) {
        let due = state.withLock { state in
            let slice: Duration = now - state.startedAt < Self.fineSpan ? Self.fineSlice : .seconds(1)
            return now - state.lastTick >= slice && !state.finished
        }
        guard due else { return }
        emit(now: now, summary: summary, latency: latency, recorded: recorded, exitStatus: nil)
    }

    /// The run is over: the last second (however short) and the final totals, with the exit status.
    func finish(summary: borrowing Summary, latency: LatencyBuckets, exitStatus: Int32) {
        emit(now: .now, summary: summary, latency: latency, recorded: summary.counts.total, exitStatus: exitStatus)
    }

    /// The totals as of the last second (or the end).
    public var totals: Totals { state.withLock { $0.totals } }

    private func emit(now: ContinuousClock.Instant, summary: borrowing Summary, latency: LatencyBuckets, recorded: Int,
                      exitStatus: Int32?) {
        // The copies happen outside the lock: workers publish meanwhile.
        let outcomes = summary.counts
        let byReason = summary.byReason
        let rows = summary.rows
        let retriedRows = summary.retriedRows
        let stopping = control?.isStopping ?? false
        let nowUnix = Double(WallClock.milliseconds()) / 1000
        let (second, totals, consumers) = state.withLock { state -> (Second, Totals, [SecondConsumer]) in
            let previous = state.totals
            var events = WorkerCounters()
            for worker in state.workers { events = events + worker }
            state.secondsDone = max(state.secondsDone + 1, Int(ProgressLine.seconds(now - state.startedAt)))
            var second = Second(index: state.secondsDone, seconds: ProgressLine.seconds(now - state.lastTick),
                                endedAtUnix: nowUnix)
            second.outcomes = Self.difference(outcomes, previous.outcomes)
            for (reason, count) in byReason where count != previous.byReason[reason, default: 0] {
                second.byReason[reason] = count - previous.byReason[reason, default: 0]
            }
            second.events = events.since(previous.events)
            second.latency = latency.since(previous.latency)
            second.stopBegan = stopping && !previous.stopping
            state.lastTick = now
            state.totals.rows = rows
            state.totals.recorded = recorded
            state.totals.outcomes = outcomes
            state.totals.byReason = byReason
            state.totals.retriedRows = retriedRows
            state.totals.events = events
            state.totals.latency = latency
            state.totals.stopping = stopping
            if second.outcomes[.delivered] > 0 { state.totals.lastSuccessAtUnix = nowUnix }
            if let exitStatus {
                state.finished = true
                state.totals.finishedAtUnix = nowUnix
                state.totals.exitStatus = exitStatus
                state.totals.stopping = stopping || exitStatus == 2
                // Every row is recorded and the connections are closing: nothing is open or in flight.
                state.totals.events.connectionsOpen = 0
                state.totals.events.inFlight = 0
            }
            return (second, state.totals, state.consumers)
        }
        for consumer in consumers { consumer(second, totals) }
    }

    private static func difference(_ now: OutcomeCounts, _ before: OutcomeCounts) -> OutcomeCounts {
        var delta = OutcomeCounts()
        for outcome in Outcome.allCases { delta[outcome] = now[outcome] - before[outcome] }
        return delta
    }
}
