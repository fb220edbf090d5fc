import APNs
import Transport

/// One reactor thread's share of a campaign: the jobs its connections (its `ConnectionPool`) pull,
/// the answers they get, the retries it owns. Everything here runs on `reactor`'s thread; other
/// threads reach it only through `reactor.execute`.
///
/// The pull model: whenever a connection has a free stream slot it takes the next job — first from
/// this worker's ready list (retries that are due, resends), then a batch from the shared work
/// queue. A fast connection takes more, a stalled one takes none; nothing is pushed.
///
/// How it settles what comes back is `Worker+Answers.swift`; what it hands on (records to the writer,
/// spent jobs to the reader, through its `WorkerOutbox`; counters to the recorder) is `Worker+HandOff.swift`.
// Confined to its reactor's thread: it crosses threads only inside `reactor.execute` closures,
// which run on that thread.
final class Worker: CampaignWorker, ClientConnectionDelegate, @unchecked Sendable {
    let reactor: Reactor
    let shared: CampaignShared
    /// `shared.control`, read for every answer: reached through `shared` it was retained and
    /// released around each call.
    let control: RunControl
    let stop: RunStop
    /// The credential group whose rows and connections this worker has (the run's one, usually).
    let group: CredentialGroup
    /// The headers of every job whose `headers` is nil.
    let runHeaders: RowHeaders?
    /// The payload of jobs whose payload is the run's: the worker's own copy (one array for all was a contended count).
    private let runPayload: [UInt8]
    /// `shared.sentRows`' bitmap, marked for each request submitted (`SentRows.mark`).
    private let sentRows: SentRows?
    let pool: ConnectionPool
    /// Where `counters` go about once a second (`Worker+HandOff.swift`); `index` is this worker's slot there.
    let recorder: RunRecorder?
    let index: Int
    @exclusivity(unchecked) var counters = WorkerCounters()
    @exclusivity(unchecked) var ready = JobQueue()
    @exclusivity(unchecked) var inFlight = InFlightJobs()
    /// Records to the writer, spent jobs to the reader, jobs from the work queue, retries on their backoff.
    let outbox: WorkerOutbox
    @exclusivity(unchecked) var retryPolicy: RetryPolicy
    /// The pool is started (a group other than the run's one opens it at its first row).
    @exclusivity(unchecked) var poolStarted = false
    /// The connections to open at the group's first row.
    @exclusivity(unchecked) var waitingSlots: [ConnectionSlot] = []
    @exclusivity(unchecked) private(set) var stopping = false
    @exclusivity(unchecked) var paceTimerSet = false
    @exclusivity(unchecked) private var templates: RequestTemplates?
    /// Every provider token this worker's requests carried, in order (`Job.sentToken` indexes it).
    @exclusivity(unchecked) var sentTokens: [ProviderToken] = []
    /// `group.settingsAccepted`, once seen: no stream-slot window from then on.
    @exclusivity(unchecked) var settingsAccepted = false
    /// `group.environmentProof` proven, once seen: BadDeviceToken answers are recorded at once.
    @exclusivity(unchecked) var environmentProven = false

    init(reactor: Reactor, shared: CampaignShared, index: Int, recorder: RunRecorder? = nil, group: Int = 0) {
        self.reactor = reactor
        self.group = shared.groups[group]
        self.recorder = recorder
        self.index = index
        self.shared = shared
        control = self.group.control
        stop = self.group.stop
        runHeaders = shared.decoder.runDefaultHeaders
        runPayload = Array(shared.decoder.runPayload)
        sentRows = shared.sentRows
        pool = ConnectionPool(reactor: reactor, shared: shared, group: self.group)
        let configuration = shared.configuration
        retryPolicy = RetryPolicy(for: configuration, worker: index)
        outbox = WorkerOutbox(reactor: reactor, outcomes: shared.outcomes, jobPool: shared.decoder.jobPool)
        outbox.workArrived = { [unowned self] in fillAll() }
    }

    // MARK: - Lifecycle (called through reactor.execute)

    func start(slots assigned: [ConnectionSlot]) {
        recordEverySecond()
        if shared.groups.count == 1 {
            poolStarted = true
            pool.start(slots: assigned, delegate: self)
        } else {
            startAtFirstRow(slots: assigned)
        }
    }

    /// With several credential groups: opens the connections once the group has a row (a key with
    /// no rows opens none), at the next `put` into its queue, or when another group moves one here.
    func startAtFirstRow(slots assigned: [ConnectionSlot]) {
        waitingSlots = assigned
        let reactor = self.reactor
        group.addWaker { [weak self] in
            reactor.execute { [weak self] in
                guard let self else { return }
                openIfRowsWait()
                fillAll()
            }
        }
        group.work.callWhenAvailable { [weak self] in
            reactor.execute { [weak self] in self?.openIfRowsWait() }
        }
    }

    /// Opens the pool when the group has rows; else waits for the next.
    private func openIfRowsWait() {
        guard !poolStarted, !stopping else { return }
        if group.hasWaitingRows || !ready.isEmpty {
            poolStarted = true
            pool.start(slots: waitingSlots, delegate: self)
        } else if !group.work.isClosed {
            let reactor = self.reactor
            group.work.callWhenAvailable { [weak self] in
                reactor.execute { [weak self] in self?.openIfRowsWait() }
            }
        }
    }

    /// The run is stopping: send nothing new; whatever is not in flight ends now as the stop
    /// says; in-flight requests get `stopGraceSeconds` to be answered, then end as the stop says.
    func beginStopping() {
        guard !stopping else { return }
        stopping = true
        outbox.endHeldJobs(&ready, as: stop)
        pool.stopReconnecting()
        if inFlight.isEmpty {
            pool.closeAll(abort: false)
        } else {
            reactor.schedule(after: .milliseconds(Int(shared.configuration.stopGraceSeconds * 1000))) { [self] in
                // What is still in flight comes back as lost (and ends as the stop says) before this returns.
                pool.closeAll(abort: true)
                publish()
            }
        }
        publish()
    }

    /// Every row is recorded: say goodbye (GOAWAY) on every connection; nothing is in flight.
    func shutdown() {
        stopping = true
        pool.shutdown()
        publishCounters()
    }

    /// A connection closed during its handshake says so on the reactor's next turn, which a stop
    /// can pre-empt; aborted, every one says so before this returns.
    func endConnections() {
        pool.closeAll(abort: true)
    }

    // MARK: - Connections

    func connectionDidBecomeReady(_ connection: ClientConnection) {
        counters.connectionsOpened += 1
        guard let slot = pool.connectionBecameReady(connection) else { return }
        fill(slot)
    }

    func connectionHasFreeSlots(_ connection: ClientConnection) {
        guard let slot = pool.slot(for: connection) else { return }
        fill(slot)
    }

    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {
        // APNs' GOAWAY debug data is {"reason": "..."}; a credentials reason ends the run.
        counters.goaways += 1
        let response = Response(status: 0, apnsID: nil, body: Array(goaway.debugData.utf8))
        if let reason = response.reason, reason.disposition == .credentialsRefused {
            control.stop(.credentialsRefused(reason: reason.name))
            beginStopping()
        }
        // Requests above last-stream-id come back through didNotProcess; refill on other connections.
        fillAll()
    }

    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        let known = pool.slot(for: connection) != nil
        counters.connectionClosed(error)
        pool.connectionClosed(connection, error: error)
        guard known else { return }
        fillAll()
        publish()
    }

    // MARK: - Pulling work

    func fillAll() {
        for slot in pool.slots where slot.isReady { fill(slot) }
    }

    private func fill(_ slot: ConnectionSlot) {
        guard !stopping, let connection = slot.connection, connection.state == .ready else { return }
        var submitted = false
        // Once per fill, not per row: `current` takes the token source's lock and reads the clock.
        let token: ProviderToken? = if case .token(let source) = group.authentication { source.current } else { nil }
        let templates = templates(for: token, runHeaders: runHeaders)
        if !settingsAccepted { settingsAccepted = group.settingsAccepted.load(ordering: .relaxed) }
        let window = settingsAccepted ? Int.max : slot.window
        let refused = group.refusals.refused.load(ordering: .acquiring)
        // Asked once (two calls into nghttp2): each request submitted takes exactly one slot.
        var free = connection.freeStreamSlots
        let pacedAt = shared.pacer == nil ? 0 : Reactor.monotonicNanoseconds()
        var permits = shared.pacer.map { $0.take(upTo: free, now: pacedAt) } ?? .max
        let granted = permits
        while permits > 0, free > 0, window == .max || connection.inFlightCount < window, let job = nextJob(for: slot) {
            if refused != 0, abortIfRefused(job, refused: refused) { continue }
            guard submit(job, on: connection, templates: templates) else {
                ready.pushFront(job)
                break
            }
            // Moved in, not copied: while its request is out the table is the job's only owner.
            inFlight.insert(consume job)
            submitted = true
            permits &-= 1
            free &-= 1
        }
        if submitted { connection.flush() }
        if let pacer = shared.pacer {
            pacer.grants?.note(used: granted - permits, takenAt: pacedAt)
            paced(pacer, unused: permits, on: connection)
        }
    }

    /// After a paced fill: permits left over go back to the pacer; when every permit was used and
    /// the connection could take more, one timer per worker wakes it when the next permit is due.
    /// A paced worker sleeps in the reactor's wait; it never polls.
    func paced(_ pacer: Pacer, unused: Int, on connection: ClientConnection) {
        let now = Reactor.monotonicNanoseconds()
        if unused > 0 {
            pacer.giveBack(unused, now: now)
            return
        }
        guard connection.freeStreamSlots > 0, !paceTimerSet, !stopping else { return }
        paceTimerSet = true
        reactor.schedule(after: .nanoseconds(Int64(pacer.wait(now: now)))) { [self] in
            paceTimerSet = false
            fillAll()
        }
    }

    private func nextJob(for slot: ConnectionSlot) -> Job? {
        if ready.isEmpty { refill() }
        guard let job = ready.popFirst() else { return nil }
        guard job.avoidConnection == slot.id else { return job }
        return nextJob(for: slot, avoidedBy: job)
    }

    /// `first` is a retry that prefers another connection (after a 500/503 or a lost connection).
    /// While another connection is ready, each such job goes to the back of the list, free to go
    /// anywhere from then on, and this connection takes the first job that does not avoid it; the
    /// other connections get the first chance at the rest on the next turn.
    @inline(never)
    private func nextJob(for slot: ConnectionSlot, avoidedBy first: Job) -> Job? {
        guard pool.hasReadySlot(besides: slot) else { return first }
        var job = first
        var unseen = ready.count
        scheduleRefill()
        while true {
            job.avoidConnection = -1
            ready.pushBack(job)
            guard unseen > 0, let next = ready.popFirst() else { return nil }
            unseen -= 1
            if next.avoidConnection != slot.id { return next }
            job = next
        }
    }

    private func refill() {
        let work = group.work
        if group.hasMoved.load(ordering: .relaxed) { for job in group.takeMoved() { ready.pushBack(job) } }
        let taken = outbox.refill(&ready, from: work)
        if taken == 0 && shared.groups.count > 1 && work.isClosed { closeIfGroupDone() }
    }

    /// A group's rows are all answered (its queue closed and empty, nothing here waits): its
    /// connections say goodbye now rather than idle until the campaign's end. Not under
    /// `--environment-fallback`, where rows may still move here.
    private func closeIfGroupDone() {
        guard !stopping, poolStarted, !shared.configuration.environmentFallback, ready.isEmpty, inFlight.isEmpty,
              !outbox.holdsRetries, !group.hasWaitingRows else { return }
        stopping = true
        pool.stopReconnecting()
        // Not from inside the connection's own callback.
        reactor.execute { [unowned self] in pool.closeAll(abort: false) }
    }

    /// The current token's templates: made again only when the token changed.
    private func templates(for token: ProviderToken?, runHeaders: RowHeaders?) -> RequestTemplates {
        if let templates, templates.jwt == token?.jwt { return templates }
        let made = RequestTemplates(token: token, runHeaders: runHeaders,
                                    pathPrefix: shared.configuration.requestPathPrefix, sentTokens: &sentTokens)
        templates = made
        return made
    }

    /// Sends `job`'s request, tagged for `inFlight`; the caller moves the job there when this
    /// returns true (nothing touches `inFlight` in between: `submit` calls no delegate method).
    private func submit(_ job: Job, on connection: ClientConnection, templates: RequestTemplates) -> Bool {
        // The turn's clock, not a read per row: latencies are measured turn to turn.
        let now = reactor.turnStartedAt
        let request = job.withHeaders { templates.request(for: $0) }
        // A broadcast row's channel is its input token, the value of the template's suffix field.
        let inputTokenIsSuffix = request.template.hasSuffixField
        let submitted = job.payloadIsInBytes // The usual job: token and payload in one buffer, one reference.
            ? connection.submit(template: request.template, bytes: job.bytes,
                                pathSuffix: inputTokenIsSuffix ? job.inputTokenRange : job.pathTokenRange,
                                body: job.payloadRange, headers: request.fields,
                                tag: inFlight.nextTag(row: job.row), submittedAt: now)
            : connection.submit(template: request.template, pathSuffix: inputTokenIsSuffix ? job.deviceToken : job.pathToken,
                                headers: request.fields, body: job.payload(runPayload: runPayload[...]),
                                tag: inFlight.nextTag(row: job.row), submittedAt: now)
        guard submitted else { return false }
        // Before its bytes can reach the socket (the connection writes after this turn's submissions).
        sentRows?.mark(job.row)
        if let sent = templates.sentIndex { job.sentToken = sent }
        job.attempts += 1
        counters.requests += 1
        job.avoidConnection = -1
        return true
    }

    /// Submitting from inside a delegate callback is fine (the connection flushes after the read),
    /// but filling other connections must not happen re-entrantly: defer it to the next turn.
    func scheduleRefill() {
        reactor.execute { [unowned self] in fillAll() }
    }

    // MARK: - Retries

    func retry(_ job: Job, afterMilliseconds delay: Int, lastAnswer: Response) {
        guard !stopping else {
            finish(stop.record(job))
            return
        }
        counters.retries += 1
        if delay == 0 {
            ready.pushBack(job)
            scheduleRefill()
            return
        }
        outbox.holdForRetry(job, milliseconds: delay) { [self] job in
            ready.pushBack(job)
            fillAll()
        }
    }
}
