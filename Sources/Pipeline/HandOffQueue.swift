#if canImport(Glibc)
import Glibc
#endif

/// A bounded, batch-oriented queue between the pipeline's threads (reader → reactors, reactors →
/// writer). Producers block while it is full — so a slow consumer slows the producer and memory
/// stays flat — and consumers take whole batches, so the lock is taken once per batch, not per row.
///
/// Consumers that must never block (reactor threads) use `takeBatch(max:)` and, when it comes back
/// empty, `callWhenAvailable(_:)`: the next `put` runs the callback (which typically posts a
/// wake-up to that reactor).
///
/// Shared by several threads behind its pthread mutex; every stored property is touched under it.
public final class HandOffQueue<Element>: @unchecked Sendable {
    // Allocated, not stored inline: pthread objects must not move, and `&property` gives no
    // stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    @exclusivity(unchecked) private var ring: [Element?]
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var count = 0
    @exclusivity(unchecked) private var closed = false
    @exclusivity(unchecked) private var availabilityCallbacks: [@Sendable () -> Void] = []
    /// How many elements a consumer blocked in `waitForBatch` waits for (0: none waits). A put
    /// wakes it only once that many are there, not for every small batch.
    @exclusivity(unchecked) private var consumerWants = 0
    /// Producers blocked on a full queue are woken once a quarter of it is free again, not each
    /// time a consumer takes a few: fewer wake-ups, so fewer context switches on a busy core.
    @exclusivity(unchecked) private var producersWaiting = 0
    private var roomToWakeProducers: Int { Swift.max(1, capacity / 4) }
    /// A producer's bell (`ringWhenRoom`), rung once `roomWanted` elements are free.
    @exclusivity(unchecked) private var roomBell: Doorbell?
    @exclusivity(unchecked) private var roomWanted = 0

    /// Elements held at most; a producer waits beyond it, which bounds memory.
    public let capacity: Int

    /// An empty, open queue holding at most `capacity` elements.
    public init(capacity: Int) {
        precondition(capacity > 0, "a hand-off queue needs room for at least one element")
        self.capacity = capacity
        ring = Array(repeating: nil, count: capacity)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(notEmpty, &attributes)
        pthread_cond_init(notFull, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(notEmpty)
        pthread_cond_destroy(notFull)
        pthread_mutex_destroy(mutex)
        notEmpty.deallocate()
        notFull.deallocate()
        mutex.deallocate()
    }

    /// Appends the elements in order, blocking while the queue is full. Returns how many were
    /// taken: all of them, unless the queue was closed first — the caller still owns the rest.
    @discardableResult
    public func put<C: Collection>(_ elements: C) -> Int where C.Element == Element {
        var iterator = elements.makeIterator()
        return append(count: elements.count) { iterator.next()! }
    }

    /// `put` for elements the caller gives up: they move into the queue, no copy (and so no
    /// retain here and release there) per element. `elements` is left with what the queue did
    /// not take, in order: nothing, unless it was closed first.
    @discardableResult
    public func put(moving elements: inout [Element]) -> Int {
        let total = elements.count
        pthread_mutex_lock(mutex)
        if !closed && capacity - count >= total {
            // Room for all: fill the ring from the back, as removeLast moves elements out.
            var slot = head + count + total
            ring.withUnsafeMutableBufferPointer { ring in
                let base = ring.baseAddress!
                while let element = elements.popLast() {
                    slot -= 1
                    // A free slot holds nil, nothing to release: initializing over it is a plain
                    // move, where assigning destroyed the nil through the optional's generic value
                    // witnesses (~60 instructions an element for a record).
                    (base + (slot < capacity ? slot : slot - capacity)).initialize(to: consume element)
                }
            }
            count += total
            signalConsumer()
            var callbacks: [@Sendable () -> Void] = []
            swap(&callbacks, &availabilityCallbacks)
            pthread_mutex_unlock(mutex)
            for callback in callbacks { callback() }
            return total
        }
        pthread_mutex_unlock(mutex)
        // No room for all now: the general path, which copies and may wait for room.
        var index = 0
        let taken = append(count: total) {
            defer { index += 1 }
            return elements[index]
        }
        elements.removeFirst(taken)
        return taken
    }

    /// `put(moving:)` without waiting: takes as many of `elements` (from the front) as fit now,
    /// none once closed, and leaves the rest there. For a producer that feeds several queues and
    /// must not wait on one of them.
    @discardableResult
    public func offer(moving elements: inout [Element]) -> Int {
        pthread_mutex_lock(mutex)
        let taken = closed ? 0 : Swift.min(elements.count, capacity - count)
        for index in 0..<taken {
            let tail = head + count + index
            ring[tail < capacity ? tail : tail - capacity] = elements[index]
        }
        count += taken
        var callbacks: [@Sendable () -> Void] = []
        if taken > 0 {
            signalConsumer()
            swap(&callbacks, &availabilityCallbacks)
        }
        pthread_mutex_unlock(mutex)
        for callback in callbacks { callback() }
        elements.removeFirst(taken)
        return taken
    }

    /// The one producer path: `next()` is asked for an element only once there is room for it.
    private func append(count total: Int, _ next: () -> Element) -> Int {
        var callbacks: [@Sendable () -> Void] = []
        var taken = 0
        pthread_mutex_lock(mutex)
        while taken < total {
            if count == capacity && !closed {
                // Full: wait until a quarter is free (or what is left to put fits).
                let room = Swift.min(total - taken, roomToWakeProducers)
                while capacity - count < room && !closed {
                    pthread_cond_broadcast(notEmpty)
                    if !availabilityCallbacks.isEmpty {
                        // Consumers waiting for a wake-up must get it before we wait for them.
                        swap(&callbacks, &availabilityCallbacks)
                        pthread_mutex_unlock(mutex)
                        for callback in callbacks { callback() }
                        callbacks.removeAll()
                        pthread_mutex_lock(mutex)
                        continue
                    }
                    producersWaiting += 1
                    pthread_cond_wait(notFull, mutex)
                    producersWaiting -= 1
                }
            }
            if closed { break }
            let tail = head + count
            ring[tail < capacity ? tail : tail - capacity] = next()
            count += 1
            taken += 1
        }
        signalConsumer()
        if !availabilityCallbacks.isEmpty {
            swap(&callbacks, &availabilityCallbacks)
        }
        pthread_mutex_unlock(mutex)
        for callback in callbacks { callback() }
        return taken
    }

    /// Puts one element, waiting for room; false when the queue is closed.
    @discardableResult
    public func put(_ element: Element) -> Bool { put(CollectionOfOne(element)) == 1 }

    /// Takes up to `max` elements without blocking; appends them to `batch`.
    public func takeBatch(max: Int, into batch: inout [Element]) {
        pthread_mutex_lock(mutex)
        takeLocked(max: max, into: &batch)
        pthread_mutex_unlock(mutex)
    }

    /// `takeBatch` into optionals, for a consumer that moves elements out again with `take()`.
    public func takeBatch(max: Int, into batch: inout [Element?]) {
        pthread_mutex_lock(mutex)
        takeLocked(max: max, into: &batch)
        pthread_mutex_unlock(mutex)
    }

    /// Takes up to `max` elements, waiting at most `timeoutSeconds` until there are `min` (at
    /// least one). Returns false when the queue is closed and drained: nothing more will ever come.
    public func waitForBatch(min: Int = 1, max: Int, timeoutSeconds: Double, into batch: inout [Element]) -> Bool {
        waitForBatch(min: min, timeoutSeconds: timeoutSeconds) { takeLocked(max: max, into: &batch) }
    }

    /// `waitForBatch` into optionals, for a consumer that moves elements out again with `take()`:
    /// an element moved into a local is one the consumer owns, which it can lend to calls without
    /// copying (one borrowed in place from an array is copied around any call that might write memory).
    public func waitForBatch(min: Int = 1, max: Int, timeoutSeconds: Double, into batch: inout [Element?]) -> Bool {
        waitForBatch(min: min, timeoutSeconds: timeoutSeconds) { takeLocked(max: max, into: &batch) }
    }

    /// Waits as `waitForBatch` says, then runs `take` (which returns how many it took) under the mutex.
    private func waitForBatch(min: Int, timeoutSeconds: Double, take: () -> Int) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let wanted = Swift.min(Swift.max(1, min), capacity)
        if count < wanted && !closed {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanos = Int(timeoutSeconds * 1e9) + deadline.tv_nsec
            deadline.tv_sec += nanos / 1_000_000_000
            deadline.tv_nsec = nanos % 1_000_000_000
            consumerWants = wanted
            while count < wanted && !closed {
                if pthread_cond_timedwait(notEmpty, mutex, &deadline) == ETIMEDOUT { break }
            }
            consumerWants = 0
        }
        let taken = take()
        return !(closed && count == 0 && taken == 0)
    }

    /// Wakes a consumer waiting in `waitForBatch` now, however few elements there are (say, when
    /// it is told no more will come).
    public func wakeConsumer() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    /// Called with the mutex held after elements were added.
    private func signalConsumer() {
        if consumerWants > 0 && count >= consumerWants { pthread_cond_broadcast(notEmpty) }
    }

    /// Runs `callback` (on the producer's thread) after the next `put`, or now if elements wait.
    public func callWhenAvailable(_ callback: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        if count > 0 || closed {
            pthread_mutex_unlock(mutex)
            callback()
            return
        }
        availabilityCallbacks.append(callback)
        pthread_mutex_unlock(mutex)
    }

    /// Rings `bell` once `room` elements are free, or the queue is closed (at once if so now): for
    /// a producer that feeds several queues with `offer` and waits for room in any of them. A queue
    /// holds one bell; a later call replaces it.
    func ringWhenRoom(_ room: Int, _ bell: Doorbell) {
        pthread_mutex_lock(mutex)
        if closed || capacity - count >= Swift.min(room, capacity) {
            pthread_mutex_unlock(mutex)
            bell.ring()
            return
        }
        roomBell = bell
        roomWanted = Swift.min(room, capacity)
        pthread_mutex_unlock(mutex)
    }

    /// No more puts: blocked producers return false, consumers drain what is left.
    public func close() {
        var callbacks: [@Sendable () -> Void] = []
        pthread_mutex_lock(mutex)
        closed = true
        roomBell?.ring()
        roomBell = nil
        swap(&callbacks, &availabilityCallbacks)
        pthread_cond_broadcast(notEmpty)
        pthread_cond_broadcast(notFull)
        pthread_mutex_unlock(mutex)
        for callback in callbacks { callback() }
    }

    /// `close()` was called: nothing more goes in.
    public var isClosed: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return closed
    }

    /// Room for this many more elements now; stale as soon as it is read.
    public var freeRoom: Int { capacity - approximateCount }

    /// Elements held now; stale as soon as it is read (for progress and tests).
    public var approximateCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return count
    }

    @discardableResult
    private func takeLocked(max: Int, into batch: inout [Element]) -> Int {
        let taken = Swift.min(max, count)
        guard taken > 0 else { return 0 }
        batch.reserveCapacity(batch.count + taken)
        for _ in 0..<taken {
            // Moved out, not copied: no retain here and release there per element.
            batch.append(ring[head].take()!)
            head += 1
            if head == capacity { head = 0 }
        }
        tookLocked(taken)
        return taken
    }

    @discardableResult
    private func takeLocked(max: Int, into batch: inout [Element?]) -> Int {
        let taken = Swift.min(max, count)
        guard taken > 0 else { return 0 }
        batch.reserveCapacity(batch.count + taken)
        ring.withUnsafeMutableBufferPointer { ring in
            let base = ring.baseAddress!
            for _ in 0..<taken {
                // Moved out and the slot set to nil by hand: `take()` on the array's element went
                // through the optional's generic value witnesses (~150 instructions a record).
                batch.append((base + head).move())
                (base + head).initialize(to: nil)
                head += 1
                if head == capacity { head = 0 }
            }
        }
        tookLocked(taken)
        return taken
    }

    /// Called with the mutex held after `taken` elements left the ring.
    private func tookLocked(_ taken: Int) {
        count -= taken
        // The bell's own lock is taken inside this one; its waiter never holds a queue's.
        if let bell = roomBell, capacity - count >= roomWanted {
            roomBell = nil
            bell.ring()
        }
        if producersWaiting > 0 && capacity - count >= Swift.min(capacity, roomToWakeProducers) {
            pthread_cond_broadcast(notFull)
        }
    }
}
