/// What a worker hands on: each row's final record to the writer thread (in batches, at most once
/// per reactor turn), its spent jobs to the reader (`JobPool`), and its `WorkerCounters` to the
/// `RunRecorder` about once a second.
extension Worker {
    func finish(_ record: consuming RowResult) {
        finished.append(consume record)
        if finished.count >= 512 { publish() }
    }

    /// A job whose record is made (`takeDeviceToken()`) goes back to the reader for a new row.
    func recycle(_ job: consuming Job) {
        if spentJobs.keep(job) { spentJobs.hand(to: shared.decoder.jobPool) }
    }

    /// Records are handed to the writer in batches, once per reactor turn at most.
    func schedulePublish() {
        guard !flushScheduled else { return }
        flushScheduled = true
        reactor.execute { [unowned self] in
            flushScheduled = false
            publish()
        }
    }

    func publish() {
        guard !finished.isEmpty else { return }
        shared.outcomes.put(moving: &finished)
    }

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
