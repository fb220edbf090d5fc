import APNs
import Transport

/// One reactor thread's share of a `--protocol binary` campaign (Apple's retired binary provider
/// API, issue 15): its connections (`BinaryLink`s), the jobs they pull from the shared work queue,
/// the retries it owns. The same reader, retry policy, writer and stop rules as the HTTP/2 `Worker`;
/// only the wire differs. Everything here runs on `reactor`'s thread.
///
/// The protocol answers only refusals, so each connection keeps a window of notifications sent
/// and not yet known good (`--binary-window`), and of those at risk of a refusal's discard a
/// smaller `BinaryWindow` that halves on refusals and grows while notifications go through. One is known good when the gateway refuses a later
/// one, or when `--binary-quiet-ms` passed without an error response; then it is recorded
/// `delivered` (status 0). After an error response every notification sent after the refused one
/// on that connection was discarded by the gateway and is sent again, without counting an attempt.
/// A connection that ends with no error response leaves the notifications of its last quiet period
/// in doubt: they are sent again, and their records say `retried_after_connection_loss`.
// Confined to its reactor's thread: it crosses threads only inside `reactor.execute` closures.
final class BinaryWorker: CampaignWorker, @unchecked Sendable {
    let reactor: Reactor
    let shared: CampaignShared
    /// The payload of jobs whose payload is the run's (`--payload-file`).
    private var runPayload: ArraySlice<UInt8> { shared.decoder.runPayload }
    let stop: RunStop
    let runHeaders: RowHeaders?
    var links: [BinaryLink] = []
    var ready = JobQueue()
    var retryTimers: [UInt64: (TimerID, Job)] = [:]
    var finished: [RowResult] = []
    var retryPolicy: RetryPolicy
    var stopping = false
    var closing = false
    private var waitingForWork = false
    private var flushScheduled = false
    private var sweepTimer: TimerID?
    let quietNanoseconds: UInt64
    /// A sweep's period, and the round after which a notification with no error response has
    /// gone through (for the window; it is known good only after the quiet period).
    let stepNanoseconds: UInt64
    let windowLimit: Int

    init(reactor: Reactor, shared: CampaignShared, index: Int) {
        self.reactor = reactor
        self.shared = shared
        stop = shared.stop
        runHeaders = shared.decoder.runDefaultHeaders
        let configuration = shared.configuration
        quietNanoseconds = UInt64(max(1, configuration.binaryQuietMilliseconds)) * 1_000_000
        stepNanoseconds = max(5_000_000, quietNanoseconds / 4)
        windowLimit = max(1, configuration.binaryWindow)
        retryPolicy = RetryPolicy(for: configuration, worker: index)
    }

    // MARK: - Lifecycle (called through reactor.execute)

    func start(slots assigned: [ConnectionSlot]) {
        let configuration = shared.configuration
        for slot in assigned {
            slot.reconnects = ReconnectSchedule(for: configuration, slot: slot.id)
            let link = BinaryLink(slot: slot, windowLimit: windowLimit)
            links.append(link)
            connect(link)
        }
    }

    /// The run is stopping: nothing new goes out; what waits ends as the stop says; what is on the
    /// wire gets `stopGraceSeconds` to become known good, then ends as the stop says.
    func beginStopping() {
        guard !stopping else { return }
        stopping = true
        while let job = ready.popFirst() { finish(stop.record(job)) }
        for (_, entry) in retryTimers {
            reactor.cancel(entry.0)
            finish(stop.record(entry.1))
        }
        retryTimers.removeAll()
        stopReconnecting()
        reactor.schedule(after: .milliseconds(Int(shared.configuration.stopGraceSeconds * 1000))) { [self] in
            for link in links {
                for sent in link.takeAll() { finish(stop.record(sent.job)) }
                link.stream?.close()
            }
            publish()
        }
        publish()
    }

    /// Every row is recorded: close every connection.
    func shutdown() {
        stopping = true
        stopReconnecting()
        for link in links { link.stream?.close() }
    }

    private func stopReconnecting() {
        closing = true
        for link in links {
            if let timer = link.slot.reconnectTimer { reactor.cancel(timer) }
            link.slot.reconnectTimer = nil
        }
    }

    // MARK: - Sending

    func fillAll() {
        for link in links where link.canSend { fill(link) }
    }

    func fill(_ link: BinaryLink) {
        guard !stopping, link.canSend, let stream = link.stream else { return }
        var sent = false
        let now = Reactor.monotonicNanoseconds()
        while link.hasRoom, stream.pendingOutputCount < 1 << 20, let job = nextJob() {
            if let reason = localRefusal(job) {
                finish(job.record(.rejected, reason: reason))
                continue
            }
            let identifier = link.append(job, at: now)
            shared.sentRows?.mark(job.row)
            let (expiration, priority) = wireValues(job)
            stream.appendOutput { out in
                LegacyNotificationFrame.append(hexToken: job.pathToken, payload: job.payload(runPayload: runPayload),
                                               identifier: identifier, expiration: expiration, priority: priority, to: &out)
            }
            job.attempts += 1
            sent = true
        }
        if sent {
            stream.flush()
            armSweep()
        }
        if !link.hasRoom { armProbe(link) }
        schedulePublish()
    }

    /// The window is full: once its newest notifications have gone unrefused for the link's
    /// horizon, they went through and the window opens. The sweep does this every round; a link
    /// whose refusals come back sooner (a near gateway) checks at its own pace instead.
    private func armProbe(_ link: BinaryLink) {
        let horizon = link.horizon(round: stepNanoseconds)
        guard link.probeTimer == nil, horizon < stepNanoseconds else { return }
        link.probeTimer = reactor.schedule(after: .nanoseconds(Int64(horizon))) { [self] in
            link.probeTimer = nil
            let now = Reactor.monotonicNanoseconds()
            link.advanceThrough(sentBefore: now > horizon ? now - horizon : 0)
            fill(link)
        }
    }

    /// The binary API's own limits, checked before anything is sent: 32-byte tokens, payloads of
    /// 2048 bytes at most.
    private func localRefusal(_ job: Job) -> String? {
        if job.pathToken.count != LegacyNotificationFrame.tokenBytes * 2 { return Reason.badDeviceToken.name }
        if job.payload(runPayload: runPayload).count > LegacyNotificationFrame.payloadBytes { return Reason.payloadTooLarge.name }
        return nil
    }

    /// Expiration (clamped to u32) and priority (10 or 5: the binary API has no 1, so 1 goes as 5).
    private func wireValues(_ job: Job) -> (UInt32, UInt8) {
        let values = job.headers?.values ?? runHeaders?.values
        let expiration = UInt32(clamping: values?.expiration ?? 0)
        let priority: UInt8 = values?.priority == .immediate || values == nil ? 10 : 5
        return (expiration, priority)
    }

    private func nextJob() -> Job? {
        if ready.isEmpty { refill() }
        return ready.popFirst()
    }

    private func refill() {
        let taken = ready.takeBatch(from: shared.work, max: 256)
        if taken == 0 && !waitingForWork && !shared.work.isClosed {
            waitingForWork = true
            let reactor = self.reactor
            shared.work.callWhenAvailable { [unowned self] in
                reactor.execute { [unowned self] in
                    waitingForWork = false
                    fillAll()
                }
            }
        }
    }

    // MARK: - The quiet period

    /// Checks the windows a few times per quiet period while anything is unconfirmed.
    private func armSweep() {
        guard sweepTimer == nil else { return }
        sweepTimer = reactor.schedule(after: .nanoseconds(Int64(stepNanoseconds))) { [self] in
            sweepTimer = nil
            sweep()
        }
    }

    /// Notifications whose quiet period passed with no error response are delivered; those a
    /// round old went through, which widens the window.
    private func sweep() {
        let now = Reactor.monotonicNanoseconds()
        let cutoff = now > quietNanoseconds ? now - quietNanoseconds : 0
        var pending = false
        for link in links {
            let horizon = link.horizon(round: stepNanoseconds)
            link.advanceThrough(sentBefore: now > horizon ? now - horizon : 0)
            for sent in link.takeQuiet(sentBefore: cutoff) { delivered(sent, on: link) }
            if link.unconfirmedCount > 0 { pending = true }
        }
        fillAll()
        if pending { armSweep() }
        publish()
    }

    func delivered(_ sent: BinaryLink.Sent, on link: BinaryLink) {
        proved(link)
        let job = sent.job
        finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .delivered, status: 0,
                         attempts: job.attempts, endpoint: link.slot.endpointLabel,
                         retriedAfterConnectionLoss: job.retriedAfterConnectionLoss))
    }

    /// The link's gateway took a notification: the connection counts as ready for the run.
    func proved(_ link: BinaryLink) {
        guard !link.proven, link.stream != nil else { return }
        link.proven = true
        link.slot.isReady = true
        shared.noteConnectionReady(endpointIndex: link.slot.endpointIndex)
    }

    // MARK: - Recording

    func finish(_ record: consuming RowResult) {
        finished.append(consume record)
        if finished.count >= 512 { publish() }
    }

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

    /// Submitting more from inside a stream callback is left to the next turn.
    func scheduleRefill() {
        reactor.execute { [unowned self] in fillAll() }
    }
}
