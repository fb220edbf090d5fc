/// What a worker hands on: each row's final record to the writer thread and its spent jobs to the
/// reader, through its `WorkerOutbox`, and its `WorkerCounters` to the `RunRecorder` about once a second.
extension Worker {
    /// The row's record goes to the writer with the outbox's next batch.
    func finish(_ record: consuming RowResult) { outbox.finish(consume record) }

    /// A job whose record is made (`takeDeviceToken()`) goes back to the reader for a new row.
    func recycle(_ job: consuming Job) { outbox.recycle(consume job) }

    /// Records are handed to the writer in batches, once per reactor turn at most.
    func schedulePublish() { outbox.schedulePublish() }

    func publish() { outbox.publish() }

    /// Hands the counters over now and every second (every `RunRecorder.fineSlice` in the run's
    /// first minute, whose report is drawn finer) until the reactor stops (the recorder's lock is
    /// taken a few times a second, never per row).
    func recordEverySecond() {
        guard let recorder else { return }
        publishCounters()
        _ = reactor.schedule(after: recorder.slice(at: .now)) { [weak self] in self?.recordEverySecond() }
    }

    /// The counters so far, with the gauges as they are now.
    func publishCounters() {
        guard let recorder else { return }
        counters.inFlight = inFlight.count
        counters.connectionsOpen = pool.slots.reduce(0) { $0 + ($1.isReady ? 1 : 0) }
        recorder.publish(worker: index, counters)
    }
}
