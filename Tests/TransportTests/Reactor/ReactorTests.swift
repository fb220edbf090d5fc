import Foundation
import Synchronization
import Testing
@testable import Transport

@Suite(.serialized)
struct ReactorTests {
    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() throws {
        let fired = Shared<[String]>([])
        let done = TransportAwaited<Void>()
        try withRunningReactor { reactor in
            reactor.execute {
                reactor.schedule(after: .milliseconds(60)) { fired.withLock { $0.append("c") } }
                reactor.schedule(after: .milliseconds(20)) { fired.withLock { $0.append("a") } }
                let cancelled = reactor.schedule(after: .milliseconds(30)) { fired.withLock { $0.append("x") } }
                reactor.schedule(after: .milliseconds(40)) { fired.withLock { $0.append("b") } }
                reactor.schedule(after: .zero) { reactor.cancel(cancelled) }
                reactor.schedule(after: .milliseconds(80)) { done.fulfil(()) }
            }
            #expect(done.wait() != nil)
        }
        #expect(fired.withLock { $0 } == ["a", "b", "c"])
    }

    @Test func timersDueTogetherFireInSchedulingOrder() throws {
        var heap = TimerHeap()
        var order: [Int] = []
        let ids = (0..<50).map { index in heap.schedule(at: UInt64(100 + index % 3)) { order.append(index) } }
        for id in ids where id.slot % 7 == 0 { heap.cancel(id) }
        while let action = heap.popDue(now: 1_000) { action() }
        let expected = (0..<50).filter { UInt32($0) % 7 != 0 }.sorted { ($0 % 3, $0) < ($1 % 3, $1) }
        #expect(order == expected)
        #expect(heap.isEmpty)
        let firedTimerWasPending = heap.cancel(ids[1])
        #expect(!firedTimerWasPending)
    }

    @Test func executeFromAnotherThreadWakesTheSleepingLoop() throws {
        try withRunningReactor { reactor in
            let ranOnReactor = TransportAwaited<Bool>()
            let start = ContinuousClock.now
            Thread.detachNewThread {
                reactor.execute { ranOnReactor.fulfil(reactor.isCurrent) }
            }
            #expect(ranOnReactor.wait(seconds: 2) == true)
            // Clock: the test's (ContinuousClock); slack: 1 s for a hand-off of microseconds (a busy scheduler).
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(!reactor.isCurrent)
        }
    }

    /// Work the reactor thread posts itself runs after the posting work, in order, and work that
    /// keeps re-posting itself does not keep a due timer from firing.
    @Test func workPostedOnTheReactorThreadRunsLaterInOrderWithoutStarvingTimers() throws {
        let order = Shared<[String]>([])
        let timerFired = TransportAwaited<Int>()
        let reposts = Shared(0)
        try withRunningReactor { reactor in
            reactor.execute {
                order.withLock { $0.append("outer start") }
                reactor.execute { order.withLock { $0.append("first") } }
                reactor.execute { order.withLock { $0.append("second") } }
                order.withLock { $0.append("outer end") }
                @Sendable func repost() {
                    reposts.withLock { $0 += 1 }
                    reactor.execute { repost() }
                }
                repost()
                reactor.schedule(after: .milliseconds(5)) { timerFired.fulfil(reposts.withLock { $0 }) }
            }
            let seen = timerFired.wait(seconds: 2)
            #expect(seen != nil, "the timer never fired behind self-reposting work")
        }
        #expect(Array(order.withLock { $0 }.prefix(4)) == ["outer start", "outer end", "first", "second"])
    }

    @Test func stopEndsRunPromptlyAndTellsEveryHandler() throws {
        let reactor = try Reactor.start(name: "stop-test")
        let registered = TransportAwaited<Void>()
        let stopped = Shared(0)
        let pipes = (0..<2).map { _ in Self.pipe() }
        reactor.execute {
            reactor.schedule(after: .seconds(60)) { Issue.record("a timer outlived stop()") }
            for (readEnd, _) in pipes {
                try? reactor.register(readEnd, interest: .readable,
                                      handler: StopRecorder(reactor: reactor, fd: readEnd, stopped: stopped))
            }
            registered.fulfil(())
        }
        #expect(registered.wait() != nil)
        let start = ContinuousClock.now
        reactor.stop()
        reactor.join()
        // Clock: the test's (ContinuousClock); slack: 1 s for a wake-up of microseconds (a busy scheduler).
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(stopped.withLock { $0 } == 2)
        for (_, writeEnd) in pipes { close(writeEnd) }
    }

    @Test func workPostedAfterStopNeverRuns() throws {
        let reactor = try Reactor.start(name: "late-post")
        reactor.stop()
        reactor.join()
        let ran = Shared(false)
        reactor.execute { ran.withLock { $0 = true } }
        usleep(50_000)
        #expect(ran.withLock { $0 } == false)
    }

    @Test func readinessReachesTheHandler() throws {
        try withRunningReactor { reactor in
            let (readEnd, writeEnd) = Self.pipe()
            defer { close(writeEnd) }
            let events = TransportAwaited<[String]>()
            reactor.execute {
                let recorder = ReadinessRecorder(reactor: reactor, fd: readEnd, events: events)
                try? reactor.register(readEnd, interest: .readable, handler: recorder)
                var byte: UInt8 = 7
                _ = write(writeEnd, &byte, 1)
            }
            #expect(events.wait() == ["readable 7"])
        }
    }

    @Test func writableInterestIsReportedOnlyWhileSwitchedOn() throws {
        try withRunningReactor { reactor in
            let (readEnd, writeEnd) = Self.pipe()
            defer { close(readEnd) }
            let events = Shared<[String]>([])
            let done = TransportAwaited<Void>()
            reactor.execute {
                let handler = WritableRecorder(reactor: reactor, fd: writeEnd, events: events, done: done)
                try? reactor.register(writeEnd, interest: .readable, handler: handler)
                reactor.schedule(after: .milliseconds(50)) {
                    events.withLock { $0.append("switch") }
                    reactor.setInterest([.readable, .writable], for: writeEnd)
                }
            }
            #expect(done.wait() != nil)
            #expect(events.withLock { $0 } == ["switch", "writable"])
        }
    }

    static func pipe() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        precondition(Glibc.pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        return (fds[0], fds[1])
    }
}

private final class StopRecorder: ReactorHandler {
    let reactor: Reactor
    let fd: Int32
    let stopped: Shared<Int>
    init(reactor: Reactor, fd: Int32, stopped: Shared<Int>) {
        self.reactor = reactor
        self.fd = fd
        self.stopped = stopped
    }
    func onReadable() {}
    func onWritable() {}
    func onHangup() {}
    func onReactorStop() {
        reactor.deregister(fd)
        close(fd)
        stopped.withLock { $0 += 1 }
    }
}

private final class ReadinessRecorder: ReactorHandler {
    let reactor: Reactor
    let fd: Int32
    let events: TransportAwaited<[String]>
    init(reactor: Reactor, fd: Int32, events: TransportAwaited<[String]>) {
        self.reactor = reactor
        self.fd = fd
        self.events = events
    }
    func onReadable() {
        var byte: UInt8 = 0
        _ = read(fd, &byte, 1)
        reactor.deregister(fd)
        close(fd)
        events.fulfil(["readable \(byte)"])
    }
    func onWritable() { events.fulfil(["writable on a read end"]) }
    func onHangup() {}
    func onReactorStop() {
        reactor.deregister(fd)
        close(fd)
    }
}

private final class WritableRecorder: ReactorHandler {
    let reactor: Reactor
    let fd: Int32
    let events: Shared<[String]>
    let done: TransportAwaited<Void>
    init(reactor: Reactor, fd: Int32, events: Shared<[String]>, done: TransportAwaited<Void>) {
        self.reactor = reactor
        self.fd = fd
        self.events = events
        self.done = done
    }
    func onReadable() { events.withLock { $0.append("readable") } }
    func onWritable() {
        events.withLock { $0.append("writable") }
        reactor.deregister(fd)
        close(fd)
        done.fulfil(())
    }
    func onHangup() {}
    func onReactorStop() {
        reactor.deregister(fd)
        close(fd)
    }
}
