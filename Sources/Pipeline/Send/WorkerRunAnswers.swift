import APNs
import Transport

/// How a worker settles answers that are about the run rather than the row.
///
/// Provider-token trouble (docs/apns.md, "Authentication"): one `ExpiredProviderToken` costs one
/// refresh of the shared token, not the campaign; a connection that refuses the refreshed token is
/// replaced; tokens refused as expired again and again mean this machine's clock is off, and the
/// run stops before it burns the list. Settings: the first answer that proves the run's settings
/// opens every connection's stream slots fully.
extension Worker {
    /// The job's `apns-expiration` (0 without one), from its own headers or the run's.
    func expiration(of job: Job) -> Int64 {
        job.withHeaders { own in if let own { own.expiration ?? 0 } else { runHeaders?.expiration ?? 0 } }
    }

    /// A 200 or 410: the row's settings are accepted. A row that used every run-wide value proves
    /// the run's (every connection opens fully from then on); one with columns of its own doubles
    /// its connection's window.
    func settingsProved(by job: Job, on connection: ClientConnection) {
        if job.headers == nil || job.headers?.own.isEmpty == true {
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
                  reason: answer.reasonText, apnsIDBytes: response.apnsIDValue.inlineBytes,
                  apnsIDOverflow: response.apnsIDValue.overflowText, hasAPNsID: response.hasAPNsID,
                  attempts: job.attempts,
                  unregisteredAt: outcome == .unregistered ? answer.timestamp : nil,
                  latencyMs: latency, endpoint: pool.endpointLabel(of: connection),
                  retriedAfterConnectionLoss: job.retriedAfterConnectionLoss, uniqueID: response.uniqueID,
                  lane: job.lane, fallbackFrom: job.fallbackFrom)
    }

    /// A 200 or 410: the group's environment is right (`EnvironmentProof`). The BadDeviceToken
    /// records it held are recorded now, `bad_token`; this worker asks no more.
    func environmentProved() {
        environmentProven = true
        for record in group.environmentProof.prove() { finish(record) }
    }

    /// A BadDeviceToken before the group's environment is proven: its record waits in the group's
    /// `EnvironmentProof` (its token copied, so that no CSV batch stays alive for it) until a 200
    /// or 410 lists it as dead, or the wrong-environment verdict ends it `aborted`.
    func holdUnproven(_ job: consuming Job, answer: Response, response: H2Response, latency: Double,
                      connection: ClientConnection) {
        let proof = group.environmentProof
        let row = job.row
        let held = record(of: job, .badToken, token: Array(job.takeDeviceToken())[...], answer: answer,
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
            if proof.stopsGroup { control.stop(.wrongEnvironment(answers: answers)) }
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
}
