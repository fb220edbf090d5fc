import Synchronization
import Transport

/// `--rate N`: at most N requests per second for the whole run, shared by every connection of
/// every reactor thread, retries included, and smooth rather than a second's worth at once.
///
/// A generic cell rate algorithm (a token bucket kept as one number): `next` is the instant the
/// bucket is empty again, each permit moves it `interval` later, and a permit is granted while
/// `next` stays at most `burst` intervals ahead of now. One atomic, so threads share no lock and
/// each takes a fill's worth of permits with one compare-and-exchange. Over any window of W
/// seconds at most N × W + `burst` requests go out; `burst` is 10 ms' worth (N / 100), at least 1.
final class Pacer: Sendable {
    /// Requests per second.
    let rate: Double
    /// Nanoseconds between two requests at `rate`.
    let interval: UInt64
    /// Requests that may go out at once after a quiet spell.
    let burst: Int
    /// The monotonic instant (Reactor's clock, ns) by which every permit granted so far is paid off.
    private let next = Atomic<UInt64>(0)
    /// Where the permits each fill used are noted with the instant they were taken, when a test asks.
    let grants: PacerGrants?

    init(rate: Double, grants: PacerGrants? = nil) {
        self.grants = grants
        precondition(rate > 0 && rate.isFinite, "a rate is a positive number")
        self.rate = rate
        // A rate so low that its interval is over 30 years waits 30 years: no overflow.
        interval = UInt64(min(1e18, max(1, (1e9 / rate).rounded())))
        burst = max(1, Int(rate / 100))
    }

    /// Up to `wanted` permits at `now` (Reactor.monotonicNanoseconds()); 0 when none is due.
    /// Permits not used are given back with `giveBack`.
    func take(upTo wanted: Int, now: UInt64) -> Int {
        guard wanted > 0 else { return 0 }
        var current = next.load(ordering: .relaxed)
        while true {
            let start = max(current, now)
            let limit = now &+ UInt64(burst) &* interval
            guard start < limit else { return 0 }
            let granted = min(wanted, Int((limit &- start) / interval))
            guard granted > 0 else { return 0 }
            let (exchanged, found) = next.compareExchange(expected: current, desired: start &+ UInt64(granted) &* interval,
                                                          ordering: .relaxed)
            if exchanged { return granted }
            current = found
        }
    }

    /// Returns `count` permits taken but not used (no job, a refused submit): the rate is a ceiling
    /// the run should reach, and unused permits would lower it. Never below what is due now: a
    /// permit given back after the bucket emptied lends no extra burst.
    func giveBack(_ count: Int, now: UInt64) {
        guard count > 0 else { return }
        var current = next.load(ordering: .relaxed)
        let lent = UInt64(count) &* interval
        while current > now {
            let desired = current &- now > lent ? current &- lent : now
            let (exchanged, found) = next.compareExchange(expected: current, desired: desired, ordering: .relaxed)
            if exchanged { return }
            current = found
        }
    }

    /// Nanoseconds from `now` until the next permit is due (0 when one is due now).
    func wait(now: UInt64) -> UInt64 {
        let limit = now &+ UInt64(burst) &* interval
        let current = next.load(ordering: .relaxed)
        // A permit is due once `next` is less than a full burst ahead: at next - burst × interval + interval.
        let due = current &+ interval
        return due > limit ? due &- limit : 0
    }
}

/// The pacer's decisions on its own clock: each fill's permits used, at the instant they were taken.
/// The pace a test can judge exactly; where the requests arrive depends on the scheduler too.
/// Shared by every reactor thread behind its mutex; a test-only record, nil in a real run.
final class PacerGrants: Sendable {
    struct Grant: Sendable {
        /// Reactor.monotonicNanoseconds() when the permits were taken.
        let takenAt: UInt64
        /// Requests submitted with them.
        let used: Int
    }

    private let list = Mutex<[Grant]>([])

    init() {}

    func note(used: Int, takenAt: UInt64) {
        guard used > 0 else { return }
        list.withLock { $0.append(Grant(takenAt: takenAt, used: used)) }
    }

    /// Every grant so far, oldest first.
    var all: [Grant] { list.withLock { $0 }.sorted { $0.takenAt < $1.takenAt } }
}
