import Synchronization

/// The run's shared state that every thread consults: whether to keep sending, and the
/// misconfiguration streak (`--abort-after`). Read on every answer, so the common case (a 200
/// while nothing is wrong) touches atomics only, never the lock. (The wrong-environment verdict is
/// each credential group's `EnvironmentProof`.)
public final class RunControl: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let cause = Mutex<StopCause?>(nil)
    private let streak = Mutex<(reason: String, count: Int)>(("", 0))
    private let streakActive = Atomic<Bool>(false)

    /// Consecutive identical setup answers that stop the run (`--abort-after`).
    public let abortAfter: Int
    /// A run's control, not stopping.
    public init(abortAfter: Int = 1) {
        self.abortAfter = max(1, abortAfter)
    }

    /// One atomic load, cheap enough for every row: the run was told to stop.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Why the run stops (the first cause wins); nil while it runs. Takes a lock.
    public var stopCause: StopCause? { cause.withLock { $0 } }

    /// Records why the run stops; returns false if it was already stopping (the first cause wins).
    @discardableResult
    public func stop(_ newCause: StopCause) -> Bool {
        let first = cause.withLock { current -> Bool in
            guard current == nil else { return false }
            current = newCause
            return true
        }
        if first { stopping.store(true, ordering: .releasing) }
        return first
    }

    /// Feeds one APNs answer to the streak. `setupReason` is the reason string when the answer is
    /// about the request's setup (BadTopic, ...), nil for any other answer.
    /// Returns true when `setupReason` reached `abortAfter` answers in a row: the run-wide value it
    /// refuses is refused for good (the workers stop sending the rows that use it).
    @discardableResult
    public func recordAnswer(setupReason: String?) -> Bool {
        if let setupReason {
            let count = streak.withLock { state -> Int in
                if state.reason == setupReason { state.count += 1 } else { state = (setupReason, 1) }
                return state.count
            }
            streakActive.store(true, ordering: .relaxed)
            return count >= abortAfter
        } else if streakActive.load(ordering: .relaxed) {
            streak.withLock { $0 = ("", 0) }
            streakActive.store(false, ordering: .relaxed)
        }
        return false
    }
}
