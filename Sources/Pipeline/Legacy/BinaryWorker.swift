import APNs
import Transport

/// One reactor thread's share of a `--protocol binary` campaign (Apple's retired binary provider
/// API, issue 15): its connections (`BinaryLink`s), the jobs they pull from the shared work queue,
/// the retries it owns. The same reader, retry policy, writer, stop rules and `WorkerOutbox` as the
/// HTTP/2 `Worker`; only the wire differs. Everything here runs on `reactor`'s thread.
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
    /// Records to the writer, jobs from the work queue, retries on their backoff.
    let outbox: WorkerOutbox
    var retryPolicy: RetryPolicy
    var stopping = false
    var closing = false
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
        outbox = WorkerOutbox(reactor: reactor, outcomes: shared.outcomes, jobPool: shared.decoder.jobPool)
        outbox.workArrived = { [unowned self] in fillAll() }
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
        outbox.endHeldJobs(&ready, as: stop)
        stopReconnecting()
        reactor.schedule(after: .milliseconds(Int(shared.configuration.stopGraceSeconds * 1000))) { [self] in
            for link in links {
                for sent in link.takeAll() { finish(stop.record(sent.job)) }
                link.stream?.close()
            }
            outbox.publish()
        }
        outbox.publish()
    }

    /// Every row is recorded: close every connection.
    func shutdown() {
        stopping = true
        stopReconnecting()
        for link in links { link.stream?.close() }
    }

    /// Nothing to do: a stream ends inside `close()`, or at the reactor's stop while registered,
    /// and holds its worker only through its handlers, which it drops as it ends.
    func endConnections() {}

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
        outbox.schedulePublish()
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
        if ready.isEmpty { _ = outbox.refill(&ready, from: shared.work) }
        return ready.popFirst()
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
        outbox.publish()
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

    /// The row's record goes to the writer with the outbox's next batch.
    func finish(_ record: consuming RowResult) { outbox.finish(consume record) }

    /// Submitting more from inside a stream callback is left to the next turn.
    func scheduleRefill() {
        reactor.execute { [unowned self] in fillAll() }
    }
}

// A binary worker's connections: opening them (fresh DNS each time), the gateway's error
// responses, and their ends. Reactor thread only, like the rest of `BinaryWorker`.
extension BinaryWorker {
    func connect(_ link: BinaryLink) {
        guard !closing else { return }
        let slot = link.slot
        slot.reconnectTimer = nil
        let endpoint = shared.configuration.endpoints[slot.endpointIndex]
        slot.endpointLabel = endpoint.description
        endpoint.resolve(on: reactor) { [self] result in
            guard !closing else { return }
            switch result {
            case .success(let addresses) where !addresses.isEmpty:
                shared.noteLookup(endpointIndex: slot.endpointIndex, failure: nil)
                open(link, endpoint: endpoint, address: addresses[slot.addressIndex % addresses.count])
            case .success:
                lookupFailed(link, host: endpoint.host, reason: "the name has no address", definite: true)
            case .failure(let error):
                if case .nameNotFound(let host, let reason) = error {
                    lookupFailed(link, host: host, reason: reason, definite: true)
                } else {
                    lookupFailed(link, host: endpoint.host, reason: "\(error)", definite: false)
                }
            }
        }
    }

    private func lookupFailed(_ link: BinaryLink, host: String, reason: String, definite: Bool) {
        shared.noteLookup(endpointIndex: link.slot.endpointIndex,
                          failure: .init(host: host, reason: reason, definite: definite))
        scheduleReconnect(link, after: link.slot.reconnects.connectionEnded(readyFor: nil))
    }

    private func open(_ link: BinaryLink, endpoint: Endpoint, address: SocketAddress) {
        let timeout = Duration.seconds(10)
        let startedAt = Reactor.monotonicNanoseconds()
        TLSStream.open(to: address, host: endpoint.host, context: shared.configuration.tls, on: reactor,
                       timeout: timeout) { [self] result in
            switch result {
            case .failure(let error):
                let failure: ClientConnectionError = switch error {
                case .connect(let socket): .connect(socket)
                case .tls(let tls): .tls(tls)
                }
                shared.noteConnectFailure(endpointIndex: link.slot.endpointIndex, EndpointFailure(failure, endpoint: endpoint))
                let dropped = shared.noteConnectionFailure(endpointIndex: link.slot.endpointIndex, detail: failure.description,
                                                           configurationError: failure.isConfigurationError)
                if !dropped { scheduleReconnect(link, after: link.slot.reconnects.connectionEnded(readyFor: nil)) }
            case .success(let stream):
                guard !closing else { return stream.close() }
                let now = Reactor.monotonicNanoseconds()
                link.noteHandshake(now &- startedAt)
                link.opened(stream, at: now)
                stream.start(onBytes: { [unowned self] bytes in received(Array(bytes), on: link, from: stream) },
                             onEnd: { [unowned self] end in ended(link, stream: stream, end: end) })
                fill(link)
            }
        }
    }

    private func scheduleReconnect(_ link: BinaryLink, after delay: Duration) {
        guard !closing else { return }
        link.slot.reconnectTimer = reactor.schedule(after: delay) { [self] in connect(link) }
    }

    // MARK: - What the gateway says

    /// Bytes from the gateway: only ever an error response (six bytes), then it closes.
    private func received(_ bytes: [UInt8], on link: BinaryLink, from stream: TLSStream) {
        guard link.stream === stream, !link.answeredWithError else { return }
        link.received += bytes
        if LegacyErrorResponse.isMalformed(link.received[...]) {
            // Not the protocol: end the connection; what it took is in doubt (`ended`).
            return stream.close()
        }
        guard let response = LegacyErrorResponse.parse(link.received[...]) else { return }
        link.answeredWithError = true
        settle(response, on: link)
        stream.close()
    }

    /// An error response: what came before the identifier it names was processed, it was refused
    /// (or, for status 10, was the last one processed), and what came after it was discarded.
    private func settle(_ response: LegacyErrorResponse, on link: BinaryLink) {
        proved(link)
        let refusal = response.status != .shutdown && response.status != .noErrors
        let (before, failed, after) = link.split(at: response.identifier, refusal: refusal)
        if refusal, let failed { link.noteAnswer(after: Reactor.monotonicNanoseconds() &- failed.sentAt) }
        for sent in before { delivered(sent, on: link) }
        if let failed {
            if !refusal {
                delivered(failed, on: link)
            } else {
                answer(failed.job, status: response.status, on: link)
            }
        }
        // Discarded by the gateway, so certainly not delivered: sent again without counting an
        // attempt, first in line and in their order. An identifier we no longer hold (0 for a frame
        // the gateway could not read) leaves all of them in doubt: their attempts count.
        for sent in after.reversed() {
            if failed != nil { sent.job.attempts -= 1 }
            if stopping { finish(stop.record(sent.job)) } else { ready.pushFront(sent.job) }
        }
        scheduleRefill()
        outbox.schedulePublish()
    }

    /// The row the gateway refused, settled by `RetryPolicy` as an HTTP/2 answer would be.
    private func answer(_ job: Job, status: LegacyStatus, on link: BinaryLink) {
        let expiration = job.headers?.expiration ?? runHeaders?.expiration ?? 0
        let action = retryPolicy.decide(status.disposition, attempts: job.attempts, expiration: expiration,
                                        nowMilliseconds: WallClock.milliseconds())
        switch action {
        case .finish(let outcome):
            finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: outcome, status: Int(status.rawValue),
                             reason: status.reasonName, attempts: job.attempts, endpoint: link.slot.endpointLabel,
                             retriedAfterConnectionLoss: job.retriedAfterConnectionLoss))
        case .retry(let delay, _):
            retry(job, afterMilliseconds: delay)
        case .refreshTokenAndRetry, .stopRun:
            retry(job, afterMilliseconds: 0)
        }
    }

    private func retry(_ job: Job, afterMilliseconds delay: Int) {
        guard !stopping else { return finish(stop.record(job)) }
        guard delay > 0 else {
            ready.pushBack(job)
            return scheduleRefill()
        }
        outbox.holdForRetry(job, milliseconds: delay) { [self] job in
            ready.pushBack(job)
            fillAll()
        }
    }

    /// The connection ended. After an error response all is settled. Otherwise the gateway closed
    /// without a word (or the connection failed): what was sent longer ago than the quiet period is
    /// delivered; what was sent within it is in doubt and is sent again, marked in its record.
    private func ended(_ link: BinaryLink, stream: TLSStream, end: TLSStream.End) {
        guard link.stream === stream else { return }
        let slot = link.slot
        if slot.isReady { shared.noteConnectionDown() }
        slot.isReady = false
        link.stream = nil
        let readyFor = link.readyAt.map { Duration.nanoseconds(Int64(clamping: Reactor.monotonicNanoseconds() &- $0)) }
        link.readyAt = nil
        var dropped = false
        if case .tlsFailed(let error) = end, !link.proven {
            // TLS failing before the gateway took anything: a refused certificate, a wrong CA
            // are configuration errors, as for HTTP/2 (`CampaignShared.noteConnectionFailure`).
            let failure = ClientConnectionError.tls(error)
            shared.noteConnectFailure(endpointIndex: slot.endpointIndex,
                                      EndpointFailure(failure, endpoint: shared.configuration.endpoints[slot.endpointIndex]))
            dropped = shared.noteConnectionFailure(endpointIndex: slot.endpointIndex, detail: failure.description,
                                                   configurationError: failure.isConfigurationError)
        }
        if !link.answeredWithError {
            let now = Reactor.monotonicNanoseconds()
            let cutoff = now > quietNanoseconds ? now - quietNanoseconds : 0
            for sent in link.takeQuiet(sentBefore: cutoff) { delivered(sent, on: link) }
            let inDoubt = link.takeAll()
            if !inDoubt.isEmpty { link.closedSilently() }
            for sent in inDoubt { lost(sent.job) }
            scheduleRefill()
            outbox.schedulePublish()
        }
        // An error response or a close by the gateway is an orderly end: replace at once.
        let orderly = link.answeredWithError || end == .peerClosed
        if dropped { return }
        scheduleReconnect(link, after: slot.reconnects.connectionEnded(readyFor: readyFor, answered: orderly, graceful: orderly))
    }

    private func lost(_ job: Job) {
        job.retriedAfterConnectionLoss = true
        guard !stopping else { return finish(stop.record(job)) }
        let expiration = job.headers?.expiration ?? runHeaders?.expiration ?? 0
        let action = retryPolicy.decideAfterConnectionLoss(attempts: job.attempts, expiration: expiration,
                                                           nowMilliseconds: WallClock.milliseconds())
        if case .finish(let outcome) = action {
            finish(job.record(outcome, reason: LocalReason.connectionLost.rawValue))
        } else {
            ready.pushBack(job)
        }
    }
}
