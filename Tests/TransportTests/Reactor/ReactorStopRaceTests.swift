import Foundation
import Synchronization
import Testing
@testable import Transport

/// Work another thread posts while a reactor shuts down is either run or released: none may stay
/// in the stopped reactor's queue, where it would keep alive whatever it holds (in a campaign, a
/// worker holding the reactor: a cycle that leaked the run's whole object graph).
@Suite struct ReactorStopRaceTests {
    /// How many `Tracked` objects are alive.
    private final class Counter: Sendable {
        let live = Atomic<Int>(0)
    }

    /// What a posted closure holds; counted while it lives.
    private final class Tracked: Sendable {
        let counter: Counter
        init(_ counter: Counter) {
            self.counter = counter
            counter.live.add(1, ordering: .relaxed)
        }
        deinit { counter.live.subtract(1, ordering: .relaxed) }
    }

    @Test func workPostedWhileTheLoopStopsIsRunOrReleased() throws {
        let counter = Counter()
        for _ in 0..<300 {
            let reactor = try Reactor.start(name: "race-reactor")
            let posting = Atomic<Bool>(true)
            let poster = Thread {
                while posting.load(ordering: .acquiring) {
                    let tracked = Tracked(counter)
                    reactor.execute { _ = tracked }
                }
            }
            poster.start()
            usleep(UInt32.random(in: 50...1_500))
            reactor.stop()
            reactor.join()
            posting.store(false, ordering: .releasing)
            while !poster.isFinished { usleep(100) }
            // The reactor is still referenced here: anything left in its queue would still be live.
            #expect(counter.live.load(ordering: .acquiring) == 0)
            _ = reactor
        }
    }

    /// The mailbox alone, without the race: once shut it keeps nothing posted to it.
    @Test func aShutMailboxRefusesWorkAndKeepsNothing() {
        let counter = Counter()
        let mailbox = ReactorMailbox()
        let tracked = Tracked(counter)
        #expect(mailbox.post { _ = tracked })
        #expect(mailbox.takeAll().count == 1)
        mailbox.shut()
        do {
            let late = Tracked(counter)
            #expect(!mailbox.post { _ = late })
        }
        #expect(counter.live.load(ordering: .acquiring) == 1)  // `tracked` only
        #expect(mailbox.takeAll().isEmpty)
        _ = tracked
    }
}
