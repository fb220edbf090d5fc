import APNs
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// One reactor thread's share of a campaign: its connections, the jobs they pull, the retries it
/// owns. Everything here runs on `reactor`'s thread; other threads reach it only through
/// `reactor.execute`.
///
/// The pull model: whenever a connection has a free stream slot it takes the next job — first from
/// this worker's ready list (retries that are due, resends), then a batch from the shared work
/// queue. A fast connection takes more, a stalled one takes none; nothing is pushed.
// Confined to its reactor's thread: it crosses threads only inside `reactor.execute` closures,
// which run on that thread.
final class Worker: ClientConnectionDelegate, @unchecked Sendable {
    let reactor: Reactor
    private let shared: CampaignShared
    /// `shared.control`, read for every answer: reached through `shared` it was retained and
    /// released around each call.
    private let control: RunControl
    /// The headers of every job whose `headers` is nil.
    private let runHeaders: RowHeaders?
    @exclusivity(unchecked) private var slots: [ConnectionSlot] = []
    @exclusivity(unchecked) private var ready = JobQueue()
    @exclusivity(unchecked) private var inFlight = InFlightJobs()
    @exclusivity(unchecked) private var retryTimers: [UInt64: (TimerID, Job)] = [:]
    @exclusivity(unchecked) private var finished: [RowResult] = []
    @exclusivity(unchecked) private var retryPolicy: RetryPolicy
    @exclusivity(unchecked) private var waitingForWork = false
    @exclusivity(unchecked) private var stopping = false
    @exclusivity(unchecked) private var shuttingDown = false
    @exclusivity(unchecked) private var flushScheduled = false
    @exclusivity(unchecked) private var templates: Templates?

    init(reactor: Reactor, shared: CampaignShared, index: Int) {
        self.reactor = reactor
        self.shared = shared
        control = shared.control
        runHeaders = shared.decoder.runDefaultHeaders
        let configuration = shared.configuration
        retryPolicy = RetryPolicy(maxAttempts: configuration.maxAttempts,
                                  baseMilliseconds: configuration.retryBaseMilliseconds,
                                  capMilliseconds: max(configuration.retryBaseMilliseconds, configuration.retryMaxMilliseconds),
                                  seed: configuration.seed &+ UInt64(index) &* 7919)
    }

    // MARK: - Lifecycle (called through reactor.execute)

    func start(slots assigned: [ConnectionSlot]) {
        slots = assigned
        let configuration = shared.configuration
        for slot in slots {
            slot.reconnects = ReconnectSchedule(
                baseMilliseconds: configuration.reconnectBaseMilliseconds,
                capMilliseconds: max(configuration.reconnectBaseMilliseconds, configuration.reconnectMaxMilliseconds),
                seed: configuration.seed &+ UInt64(slot.id) &* 104_729 &+ 1)
            connect(slot)
        }
    }

    /// The run is stopping: finish nothing new; whatever is not in flight ends now as the stop
    /// cause says; in-flight requests get `stopGraceSeconds` to be answered.
    func beginStopping() {
        guard !stopping else { return }
        stopping = true
        let cause = control.stopCause ?? .fatal(detail: "stopped")
        while let job = ready.popFirst() { finish(job.record(cause.outcomeForUnfinishedRows, reason: cause.reasonForUnfinishedRows)) }
        for (_, entry) in retryTimers {
            reactor.cancel(entry.0)
            finish(entry.1.record(cause.outcomeForUnfinishedRows, reason: cause.reasonForUnfinishedRows))
        }
        retryTimers.removeAll()
        for slot in slots {
            if let timer = slot.reconnectTimer { reactor.cancel(timer) }
            slot.reconnectTimer = nil
        }
        if inFlight.isEmpty {
            closeConnections(abort: false)
        } else {
            reactor.schedule(after: .milliseconds(Int(shared.configuration.stopGraceSeconds * 1000))) { [self] in
                closeConnections(abort: true)
                publish()
            }
        }
        publish()
    }

    /// Every row is recorded: say goodbye (GOAWAY) on every connection; nothing is in flight.
    func shutdown() {
        shuttingDown = true
        stopping = true
        closeConnections(abort: false)
    }

    private func closeConnections(abort: Bool) {
        for slot in slots {
            guard let connection = slot.connection else { continue }
            if abort { connection.abort() } else { connection.close() }
        }
    }

    // MARK: - Connections

    private func connect(_ slot: ConnectionSlot) {
        guard !stopping else { return }
        slot.reconnectTimer = nil
        let endpoint = shared.configuration.endpoints[slot.endpointIndex]
        // A fresh DNS resolution for every connection (APNS.md), off this thread.
        endpoint.resolve(on: reactor) { [self] result in
            guard !stopping else { return }
            switch result {
            case .success(let addresses) where !addresses.isEmpty:
                let address = addresses[slot.addressIndex % addresses.count]
                open(slot, endpoint: endpoint, address: address)
            case .success:
                connectionFailed(slot, detail: "\(endpoint) resolved to no address", configurationError: false)
            case .failure(let error):
                connectionFailed(slot, detail: "\(endpoint): \(error)", configurationError: false)
            }
        }
    }

    private func open(_ slot: ConnectionSlot, endpoint: Endpoint, address: SocketAddress) {
        let configuration = shared.configuration
        var settings = ClientConnection.Configuration(
            endpoint: endpoint, address: address, tls: configuration.tls, maxStreams: configuration.maxStreams,
            singleStreamUntilAuthorized: configuration.authentication.kind == .token)
        settings.pingInterval = .milliseconds(Int(configuration.pingIntervalSeconds * 1000))
        settings.pingTimeout = .milliseconds(Int(configuration.pingTimeoutSeconds * 1000))
        settings.responseTimeout = .milliseconds(Int(configuration.responseTimeoutSeconds * 1000))
        let connection = ClientConnection(reactor: reactor, configuration: settings, delegate: self)
        slot.connection = connection
        slot.endpointLabel = endpoint.description
        connection.ownerTag = slots.firstIndex { $0 === slot } ?? -1
        connection.start()
    }

    private func connectionFailed(_ slot: ConnectionSlot, detail: String, configurationError: Bool) {
        shared.noteConnectionFailure(endpointIndex: slot.endpointIndex, detail: detail,
                                     configurationError: configurationError)
        scheduleReconnect(slot, after: slot.reconnects.connectionEnded(readyFor: nil))
    }

    /// Every reconnect waits (ReconnectSchedule: exponential with jitter over consecutive failures,
    /// the count starting over only after a connection stayed up for a while), so a flapping
    /// endpoint is never hammered.
    private func scheduleReconnect(_ slot: ConnectionSlot, after delay: Duration) {
        guard !stopping else { return }
        slot.reconnectTimer = reactor.schedule(after: delay) { [self] in connect(slot) }
    }

    /// The slot whose current connection this is; nil for a connection already closed and replaced.
    private func slot(for connection: ClientConnection) -> ConnectionSlot? {
        slotIndex(for: connection).map { slots[$0] }
    }

    /// The index in `slots` of `slot(for: connection)`: for a caller that reads a field or two,
    /// without the retain and release of a slot handed back.
    private func slotIndex(for connection: ClientConnection) -> Int? {
        let tag = connection.ownerTag
        guard tag >= 0, tag < slots.count, slots[tag].connection === connection else { return nil }
        return tag
    }

    func connectionDidBecomeReady(_ connection: ClientConnection) {
        guard let slot = slot(for: connection) else { return }
        slot.isReady = true
        shared.noteConnectionReady(endpointIndex: slot.endpointIndex)
        fill(slot)
    }

    func connectionHasFreeSlots(_ connection: ClientConnection) {
        guard let slot = slot(for: connection) else { return }
        fill(slot)
    }

    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {
        // APNs' GOAWAY debug data is {"reason": "..."}; a credentials reason ends the run.
        let response = Response(status: 0, apnsID: nil, body: Array(goaway.debugData.utf8))
        if let reason = response.reason, reason.disposition == .credentialsRefused {
            control.stop(.credentialsRefused(reason: reason.name))
            beginStopping()
        }
        // Requests above last-stream-id come back through didNotProcess; refill on other connections.
        fillAll()
    }

    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        guard let slot = slot(for: connection) else { return }
        if slot.isReady { shared.noteConnectionDown() }
        slot.isReady = false
        slot.connection = nil
        if shuttingDown { return }
        let delay = slot.reconnects.connectionEnded(connection)
        if let error {
            shared.noteConnectionFailure(endpointIndex: slot.endpointIndex, detail: error.description,
                                         configurationError: error.isConfigurationError)
        }
        scheduleReconnect(slot, after: delay)
        fillAll()
        publish()
    }

    // MARK: - Pulling work

    private func fillAll() {
        for slot in slots where slot.isReady { fill(slot) }
    }

    private func fill(_ slot: ConnectionSlot) {
        guard !stopping, let connection = slot.connection, connection.state == .ready else { return }
        var submitted = false
        // Once per fill, not per row: `current` takes the token source's lock and reads the clock.
        let token: ProviderToken? = if case .token(let source) = shared.configuration.authentication {
            source.current
        } else {
            nil
        }
        let templates = templates(for: token, runHeaders: runHeaders)
        while connection.freeStreamSlots > 0, let job = nextJob(for: slot) {
            guard submit(job, on: connection, templates: templates) else {
                ready.pushFront(job)
                break
            }
            // Moved in, not copied: while its request is out the table is the job's only owner.
            inFlight.insert(consume job)
            submitted = true
        }
        if submitted { connection.flush() }
    }

    private func nextJob(for slot: ConnectionSlot) -> Job? {
        if ready.isEmpty { refill() }
        guard let job = ready.popFirst() else { return nil }
        if job.avoidConnection == slot.id && slots.contains(where: { $0 !== slot && $0.isReady }) {
            // A 500/503 retry prefers another connection: give the others the first chance at it.
            job.avoidConnection = -1
            ready.pushBack(job)
            scheduleRefill()
            return ready.count == 1 ? nil : ready.popFirst()
        }
        return job
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

    /// What every request of the current provider token shares, encoded once per token: the
    /// `authorization` header, and with it the run's own header values for the rows that use them.
    private final class Templates {
        let jwt: String?
        /// The token itself, for the jobs that carry it (nil with certificate authentication).
        let sent: SentProviderToken?
        let authorization: [H2Header]
        /// `authorization` only: rows with header columns of their own add theirs.
        let authorizationOnly: H2RequestTemplate
        /// `authorization` and the run's header values; made on the first row that uses them.
        var runDefault: H2RequestTemplate?
        private let runHeaders: RowHeaders?

        init(token: ProviderToken?, runHeaders: RowHeaders?) {
            self.runHeaders = runHeaders
            jwt = token?.jwt
            sent = token.map(SentProviderToken.init)
            authorization = token.map { [H2Header("authorization", "bearer " + $0.jwt)] } ?? []
            authorizationOnly = H2RequestTemplate(pathPrefix: "/3/device/", headers: authorization)
        }

        /// The template for a job with these headers of its own, or with the run's (nil).
        func template(for ownHeaders: RowHeaders?) -> H2RequestTemplate {
            guard ownHeaders == nil else { return authorizationOnly }
            if let runDefault { return runDefault }
            let made = H2RequestTemplate(pathPrefix: "/3/device/", headers: authorization + (runHeaders?.fields ?? []))
            runDefault = made
            return made
        }
    }

    private func templates(for token: ProviderToken?, runHeaders: RowHeaders?) -> Templates {
        if let templates, templates.jwt == token?.jwt { return templates }
        let made = Templates(token: token, runHeaders: runHeaders)
        templates = made
        return made
    }

    /// Sends `job`'s request, tagged for `inFlight`; the caller moves the job there when this
    /// returns true (nothing touches `inFlight` in between: `submit` calls no delegate method).
    private func submit(_ job: Job, on connection: ClientConnection, templates: Templates) -> Bool {
        let headers = job.headers
        // The turn's clock, not a read per row: latencies are measured turn to turn.
        let now = reactor.turnStartedAt
        guard connection.submit(template: templates.template(for: headers), pathSuffix: job.pathToken,
                                headers: headers?.fields ?? [], body: job.payload,
                                tag: inFlight.nextTag(row: job.row), submittedAt: now) else {
            return false
        }
        if let sent = templates.sent { job.sentToken = sent }
        job.attempts += 1
        job.avoidConnection = -1
        return true
    }

    // MARK: - Answers

    func connection(_ connection: ClientConnection, didReceive response: H2Response) {
        guard let job = inFlight.remove(tag: response.tag) else { return }
        let slotIndex = slotIndex(for: connection)
        // The apns-id stays inline (response.apnsIDText) on its way to the result log.
        let answer = Response(status: response.status, apnsID: nil, body: response.body)
        let latency = Double(reactor.turnStartedAt &- response.submittedAt) / 1e6
        control.recordAnswer(delivered: answer.status == 200,
                                    badDeviceToken: answer.reason == .badDeviceToken,
                                    setupReason: answer.reason.flatMap { $0.isRunLevelMisconfiguration ? $0.name : nil })
        let action = retryPolicy.decide(answer.disposition, attempts: job.attempts,
                                        expiration: expiration(of: job), nowMilliseconds: Self.epochMilliseconds())
        switch action {
        case .finish(let outcome):
            finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: outcome, status: answer.status,
                             reason: answer.reasonText, apnsID: response.apnsIDText, attempts: job.attempts,
                             unregisteredAt: outcome == .unregistered ? answer.timestamp : nil,
                             latencyMs: latency, endpoint: slotIndex.flatMap { slots[$0].endpointLabel },
                             retriedAfterConnectionLoss: job.retriedAfterConnectionLoss))
        case .retry(let delay, let elsewhere):
            if elsewhere, let slotIndex { job.avoidConnection = slots[slotIndex].id }
            retry(job, afterMilliseconds: delay, lastAnswer: answer)
        case .refreshTokenAndRetry:
            if case .token(let source) = shared.configuration.authentication, let sent = job.sentToken {
                source.refresh(after: sent.token, cause: .expiredProviderToken)
            }
            retry(job, afterMilliseconds: 0, lastAnswer: answer)
        case .stopRun:
            let reason = answer.reasonText ?? "status \(answer.status)"
            control.stop(.credentialsRefused(reason: reason))
            finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .aborted, status: answer.status,
                             reason: reason, apnsID: response.apnsIDText, attempts: job.attempts, latencyMs: latency,
                             endpoint: slotIndex.flatMap { slots[$0].endpointLabel },
                             retriedAfterConnectionLoss: job.retriedAfterConnectionLoss))
        }
        if control.isStopping && !stopping { beginStopping() }
        schedulePublish()
    }

    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        // Certainly not processed: send again without counting an attempt.
        job.attempts -= 1
        if stopping {
            let stop = control.stopCause ?? .fatal(detail: "stopped")
            finish(job.record(stop.outcomeForUnfinishedRows, reason: stop.reasonForUnfinishedRows))
        } else {
            ready.pushFront(job)
            scheduleRefill()
        }
        schedulePublish()
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        job.retriedAfterConnectionLoss = true
        if stopping {
            let stop = control.stopCause ?? .fatal(detail: "stopped")
            finish(job.record(stop.outcomeForUnfinishedRows, reason: stop.reasonForUnfinishedRows))
            schedulePublish()
            return
        }
        let action = retryPolicy.decideAfterConnectionLoss(attempts: job.attempts,
                                                           expiration: expiration(of: job),
                                                           nowMilliseconds: Self.epochMilliseconds())
        if case .finish(let outcome) = action {
            finish(job.record(outcome, reason: "ConnectionLost"))
        } else {
            ready.pushBack(job)
            scheduleRefill()
        }
        schedulePublish()
    }

    /// The job's `apns-expiration` (0 without one), from its own headers or the run's.
    private func expiration(of job: Job) -> Int64 {
        if let own = job.headers { own.expiration ?? 0 } else { runHeaders?.expiration ?? 0 }
    }

    private func retry(_ job: Job, afterMilliseconds delay: Int, lastAnswer: Response) {
        guard !stopping else {
            let stop = control.stopCause ?? .fatal(detail: "stopped")
            finish(job.record(stop.outcomeForUnfinishedRows, reason: stop.reasonForUnfinishedRows))
            return
        }
        if delay == 0 {
            ready.pushBack(job)
            scheduleRefill()
            return
        }
        // A backoff may be long: let the CSV batch this row came from go meanwhile.
        let job = job.detached()
        let tag = UInt64(job.row)
        let timer = reactor.schedule(after: .milliseconds(delay)) { [self] in
            guard let (_, job) = retryTimers.removeValue(forKey: tag) else { return }
            ready.pushBack(job)
            fillAll()
        }
        retryTimers[tag] = (timer, job)
    }

    /// Submitting from inside a delegate callback is fine (the connection flushes after the read),
    /// but filling other connections must not happen re-entrantly: defer it to the next turn.
    private func scheduleRefill() {
        reactor.execute { [unowned self] in fillAll() }
    }

    // MARK: - Recording

    private func finish(_ record: consuming RowResult) {
        finished.append(consume record)
        if finished.count >= 512 { publish() }
    }

    /// Records are handed to the writer in batches, once per reactor turn at most.
    private func schedulePublish() {
        guard !flushScheduled else { return }
        flushScheduled = true
        reactor.execute { [unowned self] in
            flushScheduled = false
            publish()
        }
    }

    private func publish() {
        guard !finished.isEmpty else { return }
        shared.outcomes.put(moving: &finished)
    }

    static func epochMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
