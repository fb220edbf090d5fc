import CLinux  // epoll, eventfd
import Glibc
import Synchronization

/// One thread's event loop: epoll readiness for registered descriptors, a timer heap on the
/// monotonic clock, and a wake-up so other threads can post work (h2load's `Worker` loop).
///
/// Threading: a reactor's registrations, timers and handlers belong to its thread. Only the members
/// marked "any thread" may be called from elsewhere: `execute`, `stop`, `join`, `isCurrent`.
/// Before `run()` starts, the thread that created the reactor with `init()` may set it up; after
/// `Reactor.start(name:)`, use `execute` to reach it.
///
/// Shutdown: `stop()` ends the loop; `run()` then calls `onReactorStop()` on every registered
/// handler (they close their own descriptors), drops the timers and the posted work not yet run,
/// and returns. A reactor runs once.
public final class Reactor: @unchecked Sendable {
    // Cross-thread state is `posted` (locked), the atomics and the immutable descriptors; all other
    // stored properties are touched only on the reactor thread.
    private let epollFD: Int32
    private let wakeFD: Int32
    private let posted = ReactorMailbox()
    /// Work the reactor's own thread posted: run at the end of the turn, without the lock and the
    /// eventfd round trip (a write, a wake-up and a read) that work from other threads needs.
    private var localWork: [@Sendable () -> Void] = []
    private let wakePending = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let ownerThread = Atomic<UInt>(0)
    private let startedThread = Mutex<pthread_t?>(nil)
    private var hasRun = false
    /// False once the kernel said epoll_pwait2 is missing (ENOSYS); reactor thread only.
    private var hasPreciseWait = true

    private struct Registration {
        let handler: any ReactorHandler
        var interest: ReactorInterest
        let generation: UInt32
    }

    private var registrations: [Registration?] = []
    private var nextGeneration: UInt32 = 1
    private var timers = TimerHeap()
    private let events: UnsafeMutablePointer<epoll_event>
    private let eventCapacity: Int32 = 256
    private static let wakeToken = UInt64.max

    /// A reactor to run on the calling thread with `run()`; that thread may register descriptors
    /// and schedule timers before calling `run()`.
    public init() throws(SocketError) {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError.system(call: "epoll_create1", errno: errno) }
        let wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            let code = errno
            Glibc.close(epollFD)
            throw SocketError.system(call: "eventfd", errno: code)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Reactor.wakeToken
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            let code = errno
            Glibc.close(epollFD)
            Glibc.close(wakeFD)
            throw SocketError.system(call: "epoll_ctl", errno: code)
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        events = .allocate(capacity: Int(eventCapacity))
        ownerThread.store(ReactorThread.currentID, ordering: .relaxed)
    }

    deinit {
        events.deallocate()
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
    }

    /// Creates a reactor and runs it on a new thread named `name`. Reach it with `execute`;
    /// end it with `stop()` and then `join()`.
    public static func start(name: String) throws(SocketError) -> Reactor {
        let reactor = try Reactor()
        // Until the new thread runs, nobody owns the reactor: setup must go through `execute`.
        reactor.ownerThread.store(0, ordering: .relaxed)
        let thread = try ReactorThread.spawn(name: name, detached: false) { reactor.run() }
        reactor.startedThread.withLock { $0 = thread }
        return reactor
    }

    /// Any thread: true when called on the thread running (or owning, before `run`) this reactor.
    public var isCurrent: Bool {
        ownerThread.load(ordering: .relaxed) == ReactorThread.currentID
    }

    /// Any thread: runs `work` on the reactor thread, in posting order, waking the loop if it sleeps.
    /// Work the reactor thread posts itself runs at the end of the current turn, never inside the
    /// call. Work posted after the reactor stopped is discarded.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        guard !finished.load(ordering: .acquiring) else { return }
        if isCurrent {
            localWork.append(work)
            return
        }
        guard posted.post(work) else { return }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            wake()
        }
    }

    /// Any thread: asks the loop to end. `run()` returns after the current turn and shutdown.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Any thread but the reactor's own: waits until the thread started by `start(name:)` has
    /// finished `run()`. Returns at once for a reactor run on a caller's thread.
    public func join() {
        guard let thread = startedThread.withLock({ state -> pthread_t? in
            defer { state = nil }
            return state
        }) else { return }
        precondition(!isCurrent, "Reactor.join() called on the reactor's own thread")
        ReactorThread.join(thread)
    }

    // MARK: Descriptors (reactor thread)

    /// Watches `fd` (already non-blocking) for `interest` and reports to `handler`, which the reactor
    /// retains until `deregister(fd)`. Errors and hang-ups are always reported.
    public func register(_ fd: Int32, interest: ReactorInterest,
                         handler: any ReactorHandler) throws(SocketError) {
        assertOnReactorThread()
        precondition(fd >= 0, "Reactor.register: invalid descriptor")
        let index = Int(fd)
        if index >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: index + 1 - registrations.count))
        }
        precondition(registrations[index] == nil, "Reactor.register: descriptor \(fd) is already registered")
        let generation = nextGeneration
        nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1
        var event = epoll_event()
        event.events = Reactor.epollEvents(for: interest)
        event.data.u64 = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw SocketError.system(call: "epoll_ctl(ADD)", errno: errno)
        }
        registrations[index] = Registration(handler: handler, interest: interest, generation: generation)
    }

    /// Changes what `fd` is watched for; free when nothing changes, one epoll_ctl when it does.
    public func setInterest(_ interest: ReactorInterest, for fd: Int32) {
        assertOnReactorThread()
        guard Int(fd) < registrations.count, var registration = registrations[Int(fd)] else {
            preconditionFailure("Reactor.setInterest: descriptor \(fd) is not registered")
        }
        guard registration.interest != interest else { return }
        var event = epoll_event()
        event.events = Reactor.epollEvents(for: interest)
        event.data.u64 = UInt64(registration.generation) << 32 | UInt64(UInt32(bitPattern: fd))
        let status = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
        assert(status == 0, "epoll_ctl(MOD) failed for \(fd): errno \(errno); deregister before close")
        registration.interest = interest
        registrations[Int(fd)] = registration
    }

    /// The current interest of a registered descriptor.
    public func interest(for fd: Int32) -> ReactorInterest? {
        assertOnReactorThread()
        guard fd >= 0, Int(fd) < registrations.count else { return nil }
        return registrations[Int(fd)]?.interest
    }

    /// Stops watching `fd` and releases its handler. Call it before closing the descriptor.
    /// Events already collected for `fd` in this turn are not delivered.
    public func deregister(_ fd: Int32) {
        assertOnReactorThread()
        guard fd >= 0, Int(fd) < registrations.count, registrations[Int(fd)] != nil else { return }
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        registrations[Int(fd)] = nil
    }

    // MARK: Timers (reactor thread)

    /// Runs `action` on the reactor thread once `delay` has passed (`.zero`: on the next turn,
    /// never from inside this call). Timers due at the same instant fire in scheduling order.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerID {
        assertOnReactorThread()
        let deadline = Reactor.monotonicNanoseconds() &+ Reactor.nanoseconds(delay)
        return timers.schedule(at: deadline, action)
    }

    /// Cancels a pending timer; harmless for one that fired or was cancelled already.
    public func cancel(_ timer: TimerID) {
        assertOnReactorThread()
        timers.cancel(timer)
    }

    // MARK: The loop

    /// The monotonic clock (`monotonicNanoseconds`), read once per loop turn as the wait for
    /// events returns: a timestamp for whatever this turn handles (requests submitted, answers
    /// read) that costs no clock read each, at the price of a turn's grain. Reactor thread only.
    /// Computed: a stored `var` read from another module costs a `swift_beginAccess` per read, which
    /// `@exclusivity(unchecked)` does not switch off across modules (twice per request in a sender).
    public var turnStartedAt: UInt64 { currentTurnStartedAt }
    @exclusivity(unchecked) private var currentTurnStartedAt: UInt64 = Reactor.monotonicNanoseconds()

    /// Runs the loop on the calling thread until `stop()`, then shuts down (see the type's comment).
    public func run() {
        precondition(!hasRun, "a Reactor runs once")
        hasRun = true
        ownerThread.store(ReactorThread.currentID, ordering: .releasing)
        while !stopRequested.load(ordering: .acquiring) {
            let ready = waitForEvents()
            currentTurnStartedAt = Reactor.monotonicNanoseconds()
            if ready < 0 {
                guard errno == EINTR else { fatalError("epoll_wait failed: errno \(errno)") }
                continue
            }
            for index in 0..<Int(ready) {
                dispatch(events[index])
            }
            runDueTimers()
            runLocalWork()
        }
        shutDown()
    }

    private func dispatch(_ event: epoll_event) {
        let token = event.data.u64
        if token == Reactor.wakeToken {
            runPostedWork()
            return
        }
        let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
        let generation = UInt32(truncatingIfNeeded: token >> 32)
        guard let handler = currentHandler(fd, generation) else { return }
        let flags = event.events
        if flags & EPOLLIN.rawValue != 0 {
            handler.onReadable()
        }
        if flags & EPOLLOUT.rawValue != 0, let handler = currentHandler(fd, generation) {
            handler.onWritable()
        }
        if flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0, let handler = currentHandler(fd, generation) {
            handler.onHangup()
        }
    }

    /// The handler still registered for this event, or nil when an earlier callback deregistered it.
    private func currentHandler(_ fd: Int32, _ generation: UInt32) -> (any ReactorHandler)? {
        guard fd >= 0, Int(fd) < registrations.count,
              let registration = registrations[Int(fd)], registration.generation == generation
        else { return nil }
        return registration.handler
    }

    private func runPostedWork() {
        var counter: UInt64 = 0
        _ = Glibc.read(wakeFD, &counter, MemoryLayout<UInt64>.size)
        // Cleared before taking the queue, so work posted from now on writes the eventfd again.
        wakePending.store(false, ordering: .releasing)
        for item in posted.takeAll() {
            if stopRequested.load(ordering: .relaxed) { return }
            item()
        }
    }

    /// The local work posted so far; what it posts in turn runs at the end of the next turn
    /// (which then does not wait), so work that re-posts itself cannot starve the descriptors.
    private func runLocalWork() {
        guard !localWork.isEmpty else { return }
        let work = localWork
        localWork.removeAll(keepingCapacity: true)
        for item in work {
            if stopRequested.load(ordering: .relaxed) { return }
            item()
        }
    }

    private func runDueTimers() {
        guard !timers.isEmpty else { return }
        let now = Reactor.monotonicNanoseconds()
        // Timers scheduled by a firing timer for `now` or earlier wait for the next turn, so a
        // zero-delay timer that re-arms itself cannot starve the descriptors.
        var budget = timers.count
        while budget > 0, !stopRequested.load(ordering: .relaxed), let action = timers.popDue(now: now) {
            action()
            budget -= 1
        }
    }

    /// Waits for events until the next timer is due. epoll_pwait2 takes the timeout in
    /// nanoseconds, so timers fire on time rather than up to a millisecond late (a mock answering
    /// after 50 ms must not answer after 51); kernels before 5.11 lack it, and get epoll_wait.
    private func waitForEvents() -> Int32 {
        if !localWork.isEmpty { return epoll_wait(epollFD, events, eventCapacity, 0) }
        guard let deadline = timers.nextDeadline else {
            return epoll_wait(epollFD, events, eventCapacity, -1)
        }
        let now = Reactor.monotonicNanoseconds()
        let remaining = deadline > now ? deadline - now : 0
        if hasPreciseWait {
            var timeout = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            let ready = epoll_pwait2(epollFD, events, eventCapacity, &timeout, nil)
            if ready >= 0 || errno != ENOSYS { return ready }
            hasPreciseWait = false
        }
        return epoll_wait(epollFD, events, eventCapacity, Int32(clamping: (remaining + 999_999) / 1_000_000))
    }

    private func shutDown() {
        let handlers = registrations.compactMap { $0?.handler }
        for handler in handlers {
            handler.onReactorStop()
        }
        for fd in registrations.indices where registrations[fd] != nil {
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, Int32(fd), nil)
        }
        registrations.removeAll()
        timers.removeAll()
        finished.store(true, ordering: .releasing)
        posted.shut()
        localWork.removeAll()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    @inline(__always)
    private func assertOnReactorThread() {
        assert(isCurrent, "reactor-owned state touched from another thread; use Reactor.execute")
    }

    private static func epollEvents(for interest: ReactorInterest) -> UInt32 {
        var events: UInt32 = 0
        if interest.contains(.readable) { events |= EPOLLIN.rawValue }
        if interest.contains(.writable) { events |= EPOLLOUT.rawValue }
        return events
    }
}
