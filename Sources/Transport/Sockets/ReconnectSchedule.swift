/// When to open the next connection to an endpoint after one ended.
///
/// A connection that was answered and then ended in order (the server's GOAWAY with NO_ERROR, or
/// a clean close) is routine: APNs rotates connections, and a server that says "go away" after
/// every few hundred streams must not slow the run down. It is replaced at once, after a small
/// random pause (up to `replaceJitterMilliseconds`) so connections told to go away together do
/// not come back together, and the failure count starts over.
///
/// Only failures back off: a connection that could not connect, failed TLS, or ended before any
/// answer counts as one more consecutive failure, and the wait grows exponentially with jitter, so
/// a flapping endpoint is never hammered (APNs reads rapid reconnects as an attack). A connection
/// that was answered and then broke (a reset, a timeout) proves the endpoint works but not that
/// it is well: the count starts over and the next one waits the first step of the backoff. A
/// connection that stayed ready for `healthyAfter` also starts the count over.
///
/// A value type: one per endpoint (or per pool slot), owned by one thread.
public struct ReconnectSchedule: Sendable {
    /// The delays between consecutive failed connections.
    public private(set) var backoff: Backoff
    /// How long a connection must stay ready to prove the endpoint works.
    public let healthyAfter: Duration
    /// The most an orderly replacement waits.
    public let replaceJitterMilliseconds: Int
    /// Connections in a row that failed.
    public private(set) var consecutiveFailures = 0
    private var random: SplitMix64

    /// Defaults: 1 s doubling up to 60 s (each drawn from [d/2, d]); healthy after 30 s ready;
    /// an orderly replacement within 1 ms.
    public init(baseMilliseconds: Int = 1000, capMilliseconds: Int = 60_000, healthyAfter: Duration = .seconds(30),
                replaceJitterMilliseconds: Int = 1, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        backoff = Backoff(baseMilliseconds: baseMilliseconds, capMilliseconds: capMilliseconds, seed: seed)
        self.healthyAfter = healthyAfter
        self.replaceJitterMilliseconds = max(0, replaceJitterMilliseconds)
        random = SplitMix64(seed: seed ^ 0x5245_504C_4143_4521)
    }

    /// A connection ended; `readyFor` is how long it had been ready (nil: it never was), `answered`
    /// whether any response came on it, `graceful` whether it ended in order (see the type).
    /// Returns how long to wait before opening the next one.
    public mutating func connectionEnded(readyFor: Duration?, answered: Bool = false, graceful: Bool = false) -> Duration {
        if answered, graceful {
            consecutiveFailures = 0
            return .microseconds(Int64(random.next() % UInt64(replaceJitterMilliseconds * 1000 + 1)))
        }
        if answered { consecutiveFailures = 0 }
        if let readyFor, readyFor >= healthyAfter { consecutiveFailures = 0 }
        consecutiveFailures += 1
        return .milliseconds(backoff.delayMilliseconds(attempt: consecutiveFailures))
    }

    /// For a `ClientConnection` that closed just now: uses its `readyAt`, `responsesReceived`,
    /// `endedGracefully` and the reactor's clock.
    public mutating func connectionEnded(_ connection: ClientConnection) -> Duration {
        let readyFor = connection.readyAt.map { Duration.nanoseconds(Int64(clamping: Reactor.monotonicNanoseconds() &- $0)) }
        return connectionEnded(readyFor: readyFor, answered: connection.responsesReceived > 0,
                               graceful: connection.endedGracefully)
    }

    /// Forgets past failures (e.g. after the user fixed something and a run restarts).
    public mutating func reset() {
        consecutiveFailures = 0
    }
}
