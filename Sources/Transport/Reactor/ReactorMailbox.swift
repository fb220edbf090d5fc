import Synchronization

/// The work other threads post to a reactor: taken a batch a turn while the loop runs, and shut
/// with the loop. Posting and shutting take one lock, so nothing can be appended after the last
/// clear: work left in a stopped reactor's queue would stay for good, and with it whatever it holds
/// (in a campaign, a worker that holds the reactor: a cycle that leaked the run's whole object graph).
final class ReactorMailbox: Sendable {
    private struct State {
        var work: [@Sendable () -> Void] = []
        var isShut = false
    }

    private let state = Mutex(State())

    /// Appends `work`; false, and nothing kept, once the mailbox is shut.
    func post(_ work: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.isShut else { return false }
            state.work.append(work)
            return true
        }
    }

    /// Everything posted so far, in posting order.
    func takeAll() -> [@Sendable () -> Void] {
        state.withLock { state in
            let taken = state.work
            state.work.removeAll(keepingCapacity: true)
            return taken
        }
    }

    /// Drops what is queued and refuses what comes later.
    func shut() {
        state.withLock { state in
            state.isShut = true
            state.work.removeAll()
        }
    }
}
