import APNs
import Transport

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
        schedulePublish()
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
        let job = job.detached()
        let tag = UInt64(job.row)
        let timer = reactor.schedule(after: .milliseconds(delay)) { [self] in
            guard let (_, job) = retryTimers.removeValue(forKey: tag) else { return }
            ready.pushBack(job)
            fillAll()
        }
        retryTimers[tag] = (timer, job)
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
            schedulePublish()
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
