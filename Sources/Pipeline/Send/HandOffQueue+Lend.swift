#if canImport(Glibc)
import Glibc
#endif

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
