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
/// Shared by several threads behind its pthread mutex; every stored property is touched under it
/// (the slots `lend` hands out excepted, which no other thread touches until they are given back).
public final class HandOffQueue<Element>: @unchecked Sendable {
    // Allocated, not stored inline: pthread objects must not move, and `&property` gives no
    // stable address.
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The slots; those from `head` on, `count` of them (wrapping), hold elements, the rest are
    /// uninitialized. Raw memory, not an array of optionals: elements move in and out by the run
    /// (one copy for a batch), and no free slot needs a nil written and destroyed through the
    /// optional's generic value witnesses.
    let ring: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) var head = 0
    @exclusivity(unchecked) var count = 0
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) var availabilityCallbacks: [@Sendable () -> Void] = []
    /// How many elements a consumer blocked in `waitForBatch` waits for (0: none waits). A put
    /// wakes it only once that many are there, not for every small batch.
    @exclusivity(unchecked) private var consumerWants = 0
    /// Producers blocked on a full queue are woken once a quarter of it is free again, not each
    /// time a consumer takes a few: fewer wake-ups, so fewer context switches on a busy core.
    @exclusivity(unchecked) private var producersWaiting = 0
    var roomToWakeProducers: Int { Swift.max(1, capacity / 4) }
    /// A producer's wake-up (`wakeWhenRoom`), woken once `roomWanted` elements are free.
    @exclusivity(unchecked) private var roomWakeUp: RoomWakeUp?
    @exclusivity(unchecked) private var roomWanted = 0

    /// Elements held at most; a producer waits beyond it, which bounds memory.
    public let capacity: Int

    /// An empty, open queue holding at most `capacity` elements.
    public init(capacity: Int) {
        precondition(capacity > 0, "a hand-off queue needs room for at least one element")
        self.capacity = capacity
        ring = .allocate(capacity: capacity)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(notEmpty, &attributes)
        pthread_cond_init(notFull, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        let first = Swift.min(count, capacity - head)
        (ring + head).deinitialize(count: first)
        ring.deinitialize(count: count - first)
        ring.deallocate()
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
            while let element = elements.popLast() {
                slot -= 1
                (ring + (slot < capacity ? slot : slot - capacity)).initialize(to: consume element)
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
            (ring + (tail < capacity ? tail : tail - capacity)).initialize(to: elements[index])
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
            if count == capacity && !closed { waitForRoomLocked(Swift.min(total - taken, roomToWakeProducers)) }
            if closed { break }
            let tail = head + count
            (ring + (tail < capacity ? tail : tail - capacity)).initialize(to: next())
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

    /// Full: waits (mutex held, released while waiting) until `room` elements are free or the
    /// queue is closed; a quarter of it, or what is left to put, so producers wake less often.
    func waitForRoomLocked(_ room: Int) {
        while capacity - count < room && !closed {
            pthread_cond_broadcast(notEmpty)
            if !availabilityCallbacks.isEmpty {
                // Consumers waiting for a wake-up must get it before we wait for them.
                var callbacks: [@Sendable () -> Void] = []
                swap(&callbacks, &availabilityCallbacks)
                pthread_mutex_unlock(mutex)
                for callback in callbacks { callback() }
                pthread_mutex_lock(mutex)
                continue
            }
            producersWaiting += 1
            pthread_cond_wait(notFull, mutex)
            producersWaiting -= 1
        }
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

    /// Waits as `waitForBatch` says, then runs `take` (which returns how many it took) under the mutex.
    private func waitForBatch(min: Int, timeoutSeconds: Double, take: () -> Int) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        waitLocked(min: min, timeoutSeconds: timeoutSeconds)
        let taken = take()
        return !(closed && count == 0 && taken == 0)
    }

    /// Waits (mutex held, released while waiting) until `min` elements (at least one, at most
    /// `capacity`) are there, the queue is closed, or `timeoutSeconds` passed.
    func waitLocked(min: Int, timeoutSeconds: Double) {
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
    }

    /// Wakes a consumer waiting in `waitForBatch` now, however few elements there are (say, when
    /// it is told no more will come).
    public func wakeConsumer() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    /// Called with the mutex held after elements were added.
    func signalConsumer() {
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

    /// Wakes `wakeUp` once `room` elements are free, or the queue is closed (at once if so now): for
    /// a producer that feeds several queues with `offer` and waits for room in any of them. A queue
    /// holds one wake-up; a later call replaces it.
    func wakeWhenRoom(_ room: Int, _ wakeUp: RoomWakeUp) {
        pthread_mutex_lock(mutex)
        if closed || capacity - count >= Swift.min(room, capacity) {
            pthread_mutex_unlock(mutex)
            wakeUp.wake()
            return
        }
        roomWakeUp = wakeUp
        roomWanted = Swift.min(room, capacity)
        pthread_mutex_unlock(mutex)
    }

    /// No more puts: blocked producers return false, consumers drain what is left.
    public func close() {
        var callbacks: [@Sendable () -> Void] = []
        pthread_mutex_lock(mutex)
        closed = true
        roomWakeUp?.wake()
        roomWakeUp = nil
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
            batch.append((ring + head).move())
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
        for _ in 0..<taken {
            batch.append((ring + head).move())
            head += 1
            if head == capacity { head = 0 }
        }
        tookLocked(taken)
        return taken
    }

    /// Called with the mutex held after `taken` elements left the ring.
    func tookLocked(_ taken: Int) {
        count -= taken
        // The wake-up's own lock is taken inside this one; its waiter never holds a queue's.
        if let wakeUp = roomWakeUp, capacity - count >= roomWanted {
            roomWakeUp = nil
            wakeUp.wake()
        }
        if producersWaiting > 0 && capacity - count >= Swift.min(capacity, roomToWakeProducers) {
            pthread_cond_broadcast(notFull)
        }
    }
}

/// The paths that move elements in and out of the ring by the run: a producer's whole
/// `HandOffBatch` in (one copy per run of slots), and, for the one consumer, each element out of
/// its slot in turn and straight to its use (`lend`), where a batch array cost a move into the
/// array and another out of it (with a 230-byte record, copies through `memcpy` and the optional's
/// generic value witnesses: ~350 instructions a record at the writer).
extension HandOffQueue {
    /// `put(moving:)` for a batch: every element the queue takes moves in, the batch keeps the rest
    /// (in order: nothing, unless the queue was closed first). Waits for room as `put` does.
    /// Returns how many were taken.
    @discardableResult
    func put(moving batch: inout HandOffBatch<Element>) -> Int {
        var taken = 0
        pthread_mutex_lock(mutex)
        while taken < batch.count {
            if count == capacity && !closed { waitForRoomLocked(Swift.min(batch.count - taken, roomToWakeProducers)) }
            if closed { break }
            let moved = Swift.min(batch.count - taken, capacity - count)
            let tail = head + count < capacity ? head + count : head + count - capacity
            let first = Swift.min(moved, capacity - tail)
            batch.move(from: taken, count: first, to: ring + tail, inPiecesOf: Self.piece)
            if moved > first { batch.move(from: taken + first, count: moved - first, to: ring, inPiecesOf: Self.piece) }
            count += moved
            taken += moved
            signalConsumer()
        }
        // The moved slots are dropped before anyone else could see the batch.
        batch.removeMoved(taken)
        var callbacks: [@Sendable () -> Void] = []
        if taken > 0 { swap(&callbacks, &availabilityCallbacks) }
        pthread_mutex_unlock(mutex)
        for callback in callbacks { callback() }
        return taken
    }

    /// Elements moved by one copy: at most 2 KiB. glibc's memcpy copies more with `rep movsb`, which
    /// has a start-up cost and which callgrind counts a byte at a time (~250 instructions a
    /// 230-byte record, where a 2 KiB piece by vector moves is ~15).
    static var piece: Int { Swift.max(1, 2048 / MemoryLayout<Element>.stride) }

    /// For the queue's one consumer: waits as `waitForBatch` says (for `min` elements, at most
    /// `timeoutSeconds`), then gives `body` up to `max` elements in order, each moved out of its
    /// slot, without the mutex: producers go on filling the other slots meanwhile, and these are
    /// free again once `body` has had them all. `open` is false once the queue is closed and
    /// drained: nothing more will come. No other thread may take from a queue that lends.
    func lend(min: Int = 1, max: Int, timeoutSeconds: Double,
              _ body: (consuming Element) -> Void) -> (lent: Int, open: Bool) {
        pthread_mutex_lock(mutex)
        waitLocked(min: min, timeoutSeconds: timeoutSeconds)
        let lent = Swift.min(max, count)
        let open = !(closed && count == 0)
        var slot = head
        pthread_mutex_unlock(mutex)
        guard lent > 0 else { return (0, open) }
        // These slots stay counted as full, so no producer writes them until they are given back.
        for _ in 0..<lent {
            body((ring + slot).move())
            slot += 1
            if slot == capacity { slot = 0 }
        }
        pthread_mutex_lock(mutex)
        head = slot
        tookLocked(lent)
        pthread_mutex_unlock(mutex)
        return (lent, open)
    }
}
