import Foundation
import Synchronization
import Testing
@testable import Pipeline

/// `HandOffQueue.lend` and `put(moving:)` of a `HandOffBatch`: the one consumer gets the elements
/// from their slots in order, also where the ring wraps, and the slots are free again once it is
/// done; producers go on filling other slots meanwhile; a batch keeps, in order, what a closed queue
/// did not take; nothing is lost, duplicated or leaked.
@Suite struct HandOffQueueLendTests {
    final class LiveCount: Sendable {
        let count = Atomic<Int>(0)
        var now: Int { count.load(ordering: .relaxed) }
    }

    /// Counts the live instances, so that an element moved out twice or never shows.
    final class Tracked: Sendable {
        let value: Int
        let live: LiveCount
        init(_ value: Int, live: LiveCount) {
            self.value = value
            self.live = live
            live.count.add(1, ordering: .relaxed)
        }
        deinit { live.count.subtract(1, ordering: .relaxed) }
    }

    static func lend(_ queue: HandOffQueue<Int>, max: Int) -> (values: [Int], open: Bool) {
        var values: [Int] = []
        let (lent, open) = queue.lend(max: max, timeoutSeconds: 0.01) { values.append($0) }
        #expect(lent == values.count)
        return (values, open)
    }

    static func batch(_ values: some Sequence<Int>) -> HandOffBatch<Int> {
        var batch = HandOffBatch<Int>(capacity: 2)  // grows
        for value in values { batch.append(value) }
        return batch
    }

    @Test func lentElementsComeInOrderAlsoWhereTheRingWrapsAndTheirSlotsAreFreedAfter() {
        let queue = HandOffQueue<Int>(capacity: 8)
        #expect(queue.put(Array(1...6)) == 6)
        #expect(Self.lend(queue, max: 4).values == [1, 2, 3, 4])
        #expect(queue.approximateCount == 2)
        var wrapping = Self.batch(7...12)  // slots 6, 7, then 0-3: the ring wraps
        #expect(queue.put(moving: &wrapping) == 6 && wrapping.isEmpty)
        #expect(Self.lend(queue, max: 100).values == Array(5...12))
        #expect(queue.approximateCount == 0)
        var all = Self.batch(13...20)
        #expect(queue.put(moving: &all) == 8 && all.isEmpty)  // all eight slots are free again
        queue.close()
        #expect(Self.lend(queue, max: 3) == ([13, 14, 15], true))
        #expect(Self.lend(queue, max: 100) == (Array(16...20), true))
        let drained = Self.lend(queue, max: 100)
        #expect(drained.values.isEmpty && !drained.open)
    }

    @Test func aBatchKeepsInOrderWhatAClosingQueueDidNotTake() {
        let queue = HandOffQueue<Int>(capacity: 3)
        #expect(queue.put([1]) == 1)
        let taken = Atomic<Int>(-1)
        let left = Mutex<[Int]>([])
        let producer = Thread {
            var batch = Self.batch(2...9)
            taken.store(queue.put(moving: &batch), ordering: .relaxed)  // waits for room until the queue closes
            let other = HandOffQueue<Int>(capacity: 16)
            other.put(moving: &batch)
            left.withLock { $0 = Self.lend(other, max: 16).values }
        }
        producer.start()
        var waited = 0
        while queue.approximateCount < 3 && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        queue.close()
        waited = 0
        while left.withLock({ $0.isEmpty }) && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        #expect(taken.load(ordering: .relaxed) == 2)
        #expect(left.withLock { $0 } == Array(4...9))
        #expect(Self.lend(queue, max: 10).values == [1, 2, 3])
    }

    @Test func aProducerFillingSlotsWhileTheConsumerHoldsOthersLosesDuplicatesAndLeaksNothing() {
        let live = LiveCount()
        do {
            let queue = HandOffQueue<Tracked>(capacity: 64)
            let total = 50_000
            let producer = Thread {
                var batch = HandOffBatch<Tracked>(capacity: 8)
                for value in 0..<total {
                    batch.append(Tracked(value, live: live))
                    if batch.count == 7 || value == total - 1 { queue.put(moving: &batch) }
                }
                queue.close()
            }
            producer.start()
            var next = 0
            var inOrder = true
            var open = true
            while open {
                (_, open) = queue.lend(max: 37, timeoutSeconds: 0.05) { element in
                    inOrder = inOrder && element.value == next
                    next += 1
                }
            }
            #expect(next == total)
            #expect(inOrder)
            // What a queue and a batch still hold when they go is released with them.
            var leftover = HandOffBatch<Tracked>(capacity: 1)
            for value in 0..<5 { leftover.append(Tracked(value, live: live)) }
            let unread = HandOffQueue<Tracked>(capacity: 8)
            #expect(unread.put(moving: &leftover) == 5 && leftover.isEmpty)
            _ = unread.lend(max: 1, timeoutSeconds: 0) { _ in }
            for value in 5..<7 { leftover.append(Tracked(value, live: live)) }
            #expect(live.now == 6)
        }
        #expect(live.now == 0)
    }
}
