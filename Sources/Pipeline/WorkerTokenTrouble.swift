import APNs
import Transport

/// How a worker settles provider-token trouble (APNS.md, "Authentication"): one
/// `ExpiredProviderToken` costs one refresh of the shared token, not the campaign; a connection
/// that refuses the refreshed token is replaced; tokens refused as expired again and again mean
/// this machine's clock is off, and the run stops before it burns the list.
extension Worker {
    /// Provider-token trouble (APNS.md): 403 ExpiredProviderToken refreshes the shared token, and
    /// when fresh tokens keep being refused the clock is off: the run stops (this row `aborted`).
    /// 429 TooManyProviderTokenUpdates means this connection saw an earlier token and refuses the
    /// refreshed one: it is replaced by a fresh connection, and the row is sent again at once, the
    /// first time without counting an attempt. Returns true when the row is settled here.
    func settleTokenTrouble(_ job: Job, answer: Response, on connection: ClientConnection,
                                    response: H2Response, latency: Double) -> Bool {
        switch answer.reason {
        case .expiredProviderToken:
            guard case .token(let source) = shared.configuration.authentication, let sent = job.sentToken,
                  case .clockSuspect(let age) = source.expired(sent.token) else { return false }
            stopRun(.providerTokenRefusedAsExpired(ageSeconds: age), at: job, answer: answer,
                    reason: answer.reasonText, response: response, latency: latency, connection: connection)
            if !stopping { beginStopping() }
            return true
        case .tooManyProviderTokenUpdates:
            pool.replace(connection)
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

    /// The answer to `job` stops the run: the row is `aborted` with that answer.
    func stopRun(_ cause: StopCause, at job: Job, answer: Response, reason: String?, response: H2Response,
                         latency: Double, connection: ClientConnection) {
        control.stop(cause)
        finish(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .aborted, status: answer.status,
                         reason: reason, apnsID: response.apnsIDText, attempts: job.attempts, latencyMs: latency,
                         endpoint: pool.endpointLabel(of: connection),
                         retriedAfterConnectionLoss: job.retriedAfterConnectionLoss))
    }
}
