import APNs
import Transport

/// How a worker settles what comes back for its requests: APNs' answer to a row (its outcome, a
/// retry, or a stop), a request that came back without one, and answers about the run rather than
/// the row.
extension Worker {
    // MARK: - Answers

    func connection(_ connection: ClientConnection, didReceive response: H2Response) {
        guard let job = inFlight.remove(tag: response.tag) else { return }
        // The apns-id stays inline (response.apnsIDText) on its way to the result log.
        // An empty body (every 200's) skips the generic decoding initializer, unspecialized across modules.
        let answer = response.body.isEmpty ? Response(status: response.status, reasonText: nil)
            : Response(status: response.status, apnsID: nil, body: response.body)
        let latency = Double(reactor.turnStartedAt &- response.submittedAt) / 1e6
        if !settingsAccepted && (answer.status == 200 || answer.status == 410) { settingsProved(by: job, on: connection) }
        if !environmentProven && group.environmentProof.held.proves(status: answer.status) { environmentProved() }
        if settleRunWideRefusal(job, answer: answer, response: response, latency: latency, on: connection) {
            schedulePublish()
            return
        }
        if answer.status == 403 || answer.status == 429, settleTokenTrouble(job, answer: answer, on: connection,
                                                                           response: response, latency: latency) {
            schedulePublish()
            return
        }
        let action = retryPolicy.decide(answer.disposition, attempts: job.attempts,
                                        expiration: expiration(of: job), nowMilliseconds: WallClock.milliseconds())
        switch action {
        case .finish(let outcome):
            if outcome == .badToken, job.fallbackFrom == 0, shared.configuration.environmentFallback,
               moveToOtherEnvironment(job) {
                break
            }
            if !environmentProven, answer.reason == group.environmentProof.held.reason {
                holdUnproven(consume job, outcome, answer: answer, response: response, latency: latency, connection: connection)
                break
            }
            // The job's last use: its record takes over its bytes.
            finish(record(of: job, outcome, token: job.takeDeviceToken(), answer: answer, response: response,
                          latency: latency, connection: connection))
            recycle(consume job)
        case .retry(let delay, let elsewhere):
            if elsewhere, let slotIndex = pool.slotIndex(for: connection) { job.avoidConnection = pool.slots[slotIndex].id }
            retry(job, afterMilliseconds: delay, lastAnswer: answer)
        case .refreshTokenAndRetry:
            // `settleTokenTrouble` refreshed the token already.
            retry(job, afterMilliseconds: 0, lastAnswer: answer)
        case .stopRun:
            if answer.reason == .unrelatedKeyIdInToken, shared.groups.count > 1, resendOnFreshConnection(job, connection, answer: answer) {
                break
            }
            let reason = answer.reasonText ?? "status \(answer.status)"
            stopRun(.credentialsRefused(reason: reason), at: job, answer: answer, reason: reason, response: response,
                    latency: latency, connection: connection)
        }
        if control.isStopping && !stopping { beginStopping() }
        schedulePublish()
    }

    // MARK: - Requests that came back without an answer

    // Refused unprocessed (sent again, no attempt counted) or lost with their stream or connection
    // (maybe processed: retried like a 500).

    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        // Certainly not processed: send again without counting an attempt.
        job.attempts -= 1
        counters.notProcessed += 1
        if stopping {
            finish(stop.record(job))
        } else {
            ready.pushFront(job)
            scheduleRefill()
        }
        schedulePublish()
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        job.retriedAfterConnectionLoss = true
        if case .streamReset = cause { counters.streamResets += 1 } else { counters.lostWithConnection += 1 }
        if stopping {
            finish(stop.record(job))
            schedulePublish()
            return
        }
        let action = retryPolicy.decideAfterConnectionLoss(attempts: job.attempts,
                                                           expiration: expiration(of: job),
                                                           nowMilliseconds: WallClock.milliseconds())
        if case .finish(let outcome) = action {
            finish(job.record(outcome, reason: LocalReason.connectionLost.rawValue))
        } else {
            // Like a 500/503 retry: the connection that lost it is the last one to try again.
            if case .retry(_, elsewhere: true) = action, let slotIndex = pool.slotIndex(for: connection) {
                job.avoidConnection = pool.slots[slotIndex].id
            }
            counters.retries += 1
            ready.pushBack(job)
            scheduleRefill()
        }
        schedulePublish()
    }

    // MARK: - Answers about the run

    // Provider-token trouble (docs/apns.md, "Authentication"): one `ExpiredProviderToken` costs one
    // refresh of the shared token, not the campaign; a connection that refuses the refreshed token is
    // replaced; tokens refused as expired again and again mean this machine's clock is off, and the
    // run stops before it burns the list. Settings: the first answer that proves the run's settings
    // opens every connection's stream slots fully.

    /// The job's `apns-expiration` (0 without one), from its own headers or the run's.
    func expiration(of job: Job) -> Int64 {
        job.withHeaders { own in if let own { own.expiration ?? 0 } else { runHeaders?.expiration ?? 0 } }
    }

    /// A 200 or 410: the row's settings are accepted. A row that used every run-wide value proves
    /// the run's (every connection opens fully from then on): a device row with no header column of
    /// its own, or a broadcast row with the run's priority and expiration (`RowHeaders.extendsRun`:
    /// its channel is the row's own, as a device row's token is). One with values of its own
    /// doubles its connection's window.
    func settingsProved(by job: Job, on connection: ClientConnection) {
        let usedTheRuns = job.withHeaders { own in own == nil || own?.own.isEmpty == true || own?.extendsRun == true }
        if usedTheRuns {
            settingsAccepted = true
            group.settingsAccepted.store(true, ordering: .relaxed)
        } else if let slot = pool.slot(for: connection) {
            slot.window = min(slot.window * 2, 1 << 20)
        }
    }

    /// Provider-token trouble (docs/apns.md): 403 ExpiredProviderToken refreshes the shared token, and
    /// when fresh tokens keep being refused the clock is off: the run stops (this row `aborted`).
    /// 429 TooManyProviderTokenUpdates means this connection saw an earlier token and refuses the
    /// refreshed one: it is replaced by a fresh connection, and the row is sent again at once, the
    /// first time without counting an attempt. Returns true when the row is settled here.
    func settleTokenTrouble(_ job: Job, answer: Response, on connection: ClientConnection,
                            response: H2Response, latency: Double) -> Bool {
        if answer.status == 429 { counters.tooManyRequests += 1 }
        switch answer.reason {
        case .expiredProviderToken:
            counters.expiredProviderTokens += 1
            guard case .token(let source) = group.authentication, let sent = job.sentToken,
                  case .clockSuspect(let age) = source.expired(sentTokens[Int(sent)]) else { return false }
            stopRun(.providerTokenRefusedAsExpired(ageSeconds: age), at: job, answer: answer,
                    reason: answer.reasonText, response: response, latency: latency, connection: connection)
            if !stopping { beginStopping() }
            return true
        case .tooManyProviderTokenUpdates:
            // A stopping run opens no connection; `retry` records the row as the stop says.
            if !stopping { pool.replace(connection) }
            if !job.refusedTokenUpdate {
                job.refusedTokenUpdate = true
                job.attempts -= 1
            }
            if job.attempts >= retryPolicy.maxAttempts { return false }
            retry(job, afterMilliseconds: 0, lastAnswer: answer)
            return true
        default:
            return false
        }
    }

    /// Feeds the answer to the run's detectors (its group's). A run-wide value (`--topic`, ...)
    /// refused `--abort-after` times in a row is refused for good: this row, and every row of the
    /// group that uses the value and is not answered yet, end `aborted`; the others go on. Returns true when the row
    /// is settled here. A row's own column refused is that row's failure (`RowHeaders.runWideRefusal`).
    func settleRunWideRefusal(_ job: Job, answer: Response, response: H2Response, latency: Double,
                              on connection: ClientConnection) -> Bool {
        let refused = answer.status == 400 ? RowHeaders.runWideRefusal(answer.reason, of: job.headers) : nil
        guard control.recordAnswer(setupReason: refused == nil ? nil : answer.reasonText),
              let refused, let reason = answer.reasonText else { return false }
        group.refusals.refuse(refused, reason: reason, warn: shared.warn)
        abortRow(job, answer: answer, reason: reason, response: response, latency: latency, connection: connection)
        return true
    }

    /// The row's record of APNs' final answer, with `token` as its device token.
    @inline(__always)
    func record(of job: Job, _ outcome: Outcome, token: ArraySlice<UInt8>, answer: Response, response: H2Response,
                latency: Double, connection: ClientConnection) -> RowResult {
        RowResult(row: job.row, deviceToken: token, outcome: outcome, status: answer.status,
                  reason: answer.reasonText, apnsID: APNsID(of: response), attempts: job.attempts,
                  unregisteredAt: outcome == .unregistered ? answer.timestamp : nil,
                  latencyMs: latency, endpoint: pool.endpointLabel(of: connection),
                  retriedAfterConnectionLoss: job.retriedAfterConnectionLoss, uniqueID: response.uniqueID,
                  lane: job.lane, fallbackFrom: job.fallbackFrom)
    }

    /// A 200 or 410 (a broadcast's 200): the group's environment is right (`EnvironmentProof`). The
    /// BadDeviceToken (ChannelNotRegistered) records it held are recorded now; this worker asks no more.
    func environmentProved() {
        environmentProven = true
        for record in group.environmentProof.prove() { finish(record) }
    }

    /// A BadDeviceToken (a broadcast's ChannelNotRegistered) before the group's environment is
    /// proven: its record, `outcome`, waits in the group's `EnvironmentProof` (its token copied, so
    /// that no CSV batch stays alive for it) until a proof lists it as dead, or the
    /// wrong-environment verdict ends it `aborted`.
    func holdUnproven(_ job: consuming Job, _ outcome: Outcome, answer: Response, response: H2Response, latency: Double,
                      connection: ClientConnection) {
        let proof = group.environmentProof
        let row = job.row
        let held = record(of: job, outcome, token: Array(job.takeDeviceToken())[...], answer: answer,
                          response: response, latency: latency, connection: connection)
        recycle(job)
        switch proof.hold(held) {
        case .held:
            // Exempt from the crash window: after a kill it is sent again, neither counted nor withheld.
            shared.sentRows?.unmark(row)
        case .record(let record):
            if proof.isProven { environmentProven = true }
            finish(record)
        case .verdict(let answers, let records):
            for record in records { finish(record) }
            if proof.stopsGroup { control.stop(.wrongEnvironment(answers: answers, reason: proof.held.reason)) }
        }
    }

    /// `job` uses a run-wide value APNs refused for good: it ends `aborted` with that reason, unsent.
    func abortIfRefused(_ job: Job, refused: UInt8) -> Bool {
        guard let reason = group.refusals.refusal(of: job, refused: refused) else { return false }
        finish(job.record(.aborted, reason: reason))
        schedulePublish()
        return true
    }

    /// The answer to `job` stops the run: the row is `aborted` with that answer.
    func stopRun(_ cause: StopCause, at job: Job, answer: Response, reason: String?, response: H2Response,
                 latency: Double, connection: ClientConnection) {
        control.stop(cause)
        abortRow(job, answer: answer, reason: reason, response: response, latency: latency, connection: connection)
    }

    /// The row ends `aborted` with this answer.
    func abortRow(_ job: Job, answer: Response, reason: String?, response: H2Response, latency: Double,
                  connection: ClientConnection) {
        finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .aborted, status: answer.status,
                         reason: reason, apnsID: response.apnsIDText, attempts: job.attempts, latencyMs: latency,
                         endpoint: pool.endpointLabel(of: connection),
                         retriedAfterConnectionLoss: job.retriedAfterConnectionLoss, uniqueID: response.uniqueID,
                         lane: job.lane, fallbackFrom: job.fallbackFrom))
    }

    // MARK: - Several credential groups

    // A BadDeviceToken may move a row to the other environment (`--environment-fallback`), and an
    // UnrelatedKeyIdInToken is about the connection, not the key: the row goes again on a fresh
    // connection of its own key.

    /// `--environment-fallback`: a row answered BadDeviceToken here goes once to the group that
    /// serves its topic in the other environment. False when none does: the row stays BadDeviceToken.
    func moveToOtherEnvironment(_ job: Job) -> Bool {
        guard let router = shared.router else { return false }
        let topic = job.headers?.values.topic ?? shared.configuration.defaults.topic
        guard case .group(let target) = router.groupServing(topic: topic, in: group.environment.other) else {
            return false
        }
        let moved = job.detached()
        moved.fallbackFrom = RowResult.code(of: group.environment)
        moved.group = target
        moved.lane = UInt16(target + 1)
        moved.avoidConnection = -1
        moved.sentToken = nil
        counters.retries += 1
        shared.groups[target].move(moved)
        return true
    }

    /// APNs answered UnrelatedKeyIdInToken: the connection is tied to another key (which this
    /// run never sends on it; a connection is one group's), so it is replaced and the row sent
    /// again at once without counting an attempt. A second such answer for the row is the key's
    /// own fault: false, and the caller stops the group as for any refused key.
    func resendOnFreshConnection(_ job: Job, _ connection: ClientConnection, answer: Response) -> Bool {
        guard !job.resentAfterUnrelatedKey else { return false }
        job.resentAfterUnrelatedKey = true
        job.attempts -= 1
        if !stopping { pool.replace(connection) }
        retry(job, afterMilliseconds: 0, lastAnswer: answer)
        return true
    }
}
