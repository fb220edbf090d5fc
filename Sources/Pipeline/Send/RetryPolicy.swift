import APNs
import Transport

/// What the sender does with a row after an answer, by its `Disposition` (docs/apns.md's response table):
/// finish it with an outcome, retry it (after a backoff, maybe elsewhere), refresh the provider
/// token first, or stop the whole run.
public struct RetryPolicy: Sendable {
    /// Requests per row at most; the last failure ends it `gave_up`.
    public var maxAttempts: Int
    private var backoff: Backoff

    /// A policy with its backoff; `seed` makes the jitter repeatable.
    public init(maxAttempts: Int, baseMilliseconds: Int, capMilliseconds: Int, seed: UInt64) {
        self.maxAttempts = max(1, maxAttempts)
        self.backoff = Backoff(baseMilliseconds: baseMilliseconds, capMilliseconds: capMilliseconds, seed: seed)
    }

    /// What to do with the row next.
    public enum Action: Sendable, Equatable {
        /// The row is done.
        case finish(Outcome)
        /// Send it again after `delayMilliseconds`; `elsewhere` prefers another connection.
        case retry(delayMilliseconds: Int, elsewhere: Bool)
        /// Regenerate the shared provider token (if the failed one is still current), then retry.
        case refreshTokenAndRetry
        /// The credentials are refused: stop the run; this row is `aborted`.
        case stopRun
    }

    /// Decides after an answer to attempt number `attempts` (1-based, this answer included).
    /// `expiration` is the notification's apns-expiration (epoch seconds, 0 = none); `now` in ms,
    /// read only when a retry is weighed against the expiration (not for every final answer).
    public mutating func decide(_ disposition: Disposition, attempts: Int, expiration: Int64,
                                nowMilliseconds: @autoclosure () -> Int64) -> Action {
        switch disposition {
        case .delivered: return .finish(.delivered)
        case .deadToken: return .finish(.unregistered)
        case .badToken: return .finish(.badToken)
        case .permanent: return .finish(.failed)
        case .credentialsRefused: return .stopRun
        case .refreshToken:
            return attempts >= maxAttempts ? .finish(.gaveUp) : .refreshTokenAndRetry
        case .retryLater(let scope):
            return retryLater(attempts: attempts, elsewhere: scope == .connection, expiration: expiration,
                              nowMilliseconds: nowMilliseconds())
        }
    }

    /// After a connection was lost with the row in flight (it may or may not have been processed).
    public mutating func decideAfterConnectionLoss(attempts: Int, expiration: Int64,
                                                   nowMilliseconds: @autoclosure () -> Int64) -> Action {
        retryLater(attempts: attempts, elsewhere: true, expiration: expiration, nowMilliseconds: nowMilliseconds(),
                   immediate: true)
    }

    private mutating func retryLater(attempts: Int, elsewhere: Bool, expiration: Int64, nowMilliseconds: Int64,
                                     immediate: Bool = false) -> Action {
        guard attempts < maxAttempts else { return .finish(.gaveUp) }
        let delay = immediate ? 0 : backoff.delayMilliseconds(attempt: attempts)
        if expiration > 0 && nowMilliseconds + Int64(delay) > expiration * 1000 { return .finish(.gaveUp) }
        return .retry(delayMilliseconds: delay, elsewhere: elsewhere)
    }
}
