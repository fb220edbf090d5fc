/// When to open the next connection to an endpoint after one ended: exponential backoff with
/// jitter over consecutive failures, so a flapping endpoint is never hammered (APNs reads rapid
/// reconnects as an attack).
///
/// A connection that stayed ready for `healthyAfter` proves the endpoint works: the failure count
/// starts over, and the next connection waits only the first step of the backoff (never zero: a
/// server that closes every connection after a while still gets a pause). A connection that failed
/// before becoming ready, or soon after, counts as one more consecutive failure.
///
/// A value type: one per endpoint (or per pool slot), owned by one thread.
public struct ReconnectSchedule: Sendable {
    /// The delays between consecutive failed connections.
    public private(set) var backoff: Backoff
    /// How long a connection must stay ready to prove the endpoint works.
    public let healthyAfter: Duration
    /// Connections in a row that failed or did not stay up for `healthyAfter`.
    public private(set) var consecutiveFailures = 0

    /// Defaults: 1 s doubling up to 60 s (each drawn from [d/2, d]); healthy after 30 s ready.
    public init(baseMilliseconds: Int = 1000, capMilliseconds: Int = 60_000, healthyAfter: Duration = .seconds(30),
                seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        backoff = Backoff(baseMilliseconds: baseMilliseconds, capMilliseconds: capMilliseconds, seed: seed)
        self.healthyAfter = healthyAfter
    }

    /// A connection ended; `readyFor` is how long it had been ready (nil: it never was).
    /// Returns how long to wait before opening the next one.
    public mutating func connectionEnded(readyFor: Duration?) -> Duration {
        if let readyFor, readyFor >= healthyAfter { consecutiveFailures = 0 }
        consecutiveFailures += 1
        return .milliseconds(backoff.delayMilliseconds(attempt: consecutiveFailures))
    }

    /// For a `ClientConnection` that closed just now: uses its `readyAt` and the reactor's clock.
    public mutating func connectionEnded(_ connection: ClientConnection) -> Duration {
        let readyFor = connection.readyAt.map { Duration.nanoseconds(Int64(clamping: Reactor.monotonicNanoseconds() &- $0)) }
        return connectionEnded(readyFor: readyFor)
    }

    /// Forgets past failures (e.g. after the user fixed something and a run restarts).
    public mutating func reset() {
        consecutiveFailures = 0
    }
}
