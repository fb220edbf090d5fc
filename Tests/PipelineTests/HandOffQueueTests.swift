import Foundation
import Synchronization
import Testing
@testable import Pipeline

@Suite struct HandOffQueueTests {
    @Test func batchesComeOutInOrder() {
        let queue = HandOffQueue<Int>(capacity: 10)
        #expect(queue.put([1, 2, 3, 4]) == 4)
        var batch: [Int] = []
        queue.takeBatch(max: 3, into: &batch)
        #expect(batch == [1, 2, 3])
        queue.takeBatch(max: 3, into: &batch)
        #expect(batch == [1, 2, 3, 4])
    }

    @Test func aFullQueueBlocksTheProducerUntilTheConsumerTakes() {
        let queue = HandOffQueue<Int>(capacity: 4)
        let produced = Atomic<Int>(0)
        let producer = Thread {
            for value in 0..<1000 {
                queue.put(value)
                produced.add(1, ordering: .relaxed)
            }
            queue.close()
        }
        producer.start()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(produced.load(ordering: .relaxed) <= 4, "at most `capacity` before anyone takes")
        var all: [Int] = []
        while queue.waitForBatch(max: 7, timeoutSeconds: 1, into: &all) {}
        #expect(all == Array(0..<1000))
    }

    @Test func aWaitingConsumerIsCalledBackOnTheNextPutEvenWhenThatPutMustWait() {
        let queue = HandOffQueue<Int>(capacity: 2)
        let called = Atomic<Int>(0)
        queue.callWhenAvailable { called.add(1, ordering: .relaxed) }
        #expect(called.load(ordering: .relaxed) == 0)
        let producer = Thread { queue.put(Array(0..<5)) }
        producer.start()
        // The producer fills the queue and would wait for a consumer: the callback must have run.
        var waited = 0
        while called.load(ordering: .relaxed) == 0 && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        #expect(called.load(ordering: .relaxed) == 1)
        var all: [Int] = []
        while all.count < 5 { queue.takeBatch(max: 5, into: &all) }
        #expect(all == [0, 1, 2, 3, 4])
    }

    @Test func closingReturnsWhatWasNotTaken() {
        let queue = HandOffQueue<Int>(capacity: 2)
        queue.close()
        #expect(queue.put([1, 2, 3]) == 0)
        var batch: [Int] = []
        #expect(!queue.waitForBatch(max: 1, timeoutSeconds: 0.01, into: &batch))
    }

    @Test func movedElementsArriveInOrderAndLeaveTheArrayEmpty() {
        let queue = HandOffQueue<String>(capacity: 10)
        var strings = (0..<6).map { "row \($0) " + String(repeating: "x", count: 30) }
        let expected = strings
        #expect(queue.put(moving: &strings) == 6)
        #expect(strings.isEmpty)
        var batch: [String] = []
        queue.takeBatch(max: 10, into: &batch)
        #expect(batch == expected)
    }

    /// The queue closes while a producer waits for room: what it did not take stays with the
    /// producer, in order, so the caller can still record those rows.
    @Test func movingIntoAQueueThatClosesLeavesTheRestInOrder() {
        let queue = HandOffQueue<Int>(capacity: 3)
        let left = Mutex<[Int]>([])
        let taken = Atomic<Int>(-1)
        let producer = Thread {
            var values = Array(0..<8)
            taken.store(queue.put(moving: &values), ordering: .relaxed)
            left.withLock { $0 = values }
        }
        producer.start()
        var waited = 0
        while queue.approximateCount < 3 && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        queue.close()
        waited = 0
        while taken.load(ordering: .relaxed) < 0 && waited < 200 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        #expect(taken.load(ordering: .relaxed) == 3)
        #expect(left.withLock { $0 } == [3, 4, 5, 6, 7])
        var batch: [Int] = []
        queue.takeBatch(max: 10, into: &batch)
        #expect(batch == [0, 1, 2])
    }

    /// The writer waits for a worthwhile batch: small puts do not hand it a few records at a time.
    @Test func aConsumerWaitingForAMinimumGetsAtLeastThatMany() {
        let queue = HandOffQueue<Int>(capacity: 1000)
        let producer = Thread {
            for value in 0..<300 {
                queue.put(value)
                if value % 10 == 0 { Thread.sleep(forTimeInterval: 0.001) }
            }
        }
        producer.start()
        var batch: [Int] = []
        #expect(queue.waitForBatch(min: 100, max: 1000, timeoutSeconds: 10, into: &batch))
        #expect(batch.count >= 100)
        #expect(batch == Array(0..<batch.count))
    }

    @Test func aConsumerWaitingForAMinimumTakesWhatThereIsAtItsTimeout() {
        let queue = HandOffQueue<Int>(capacity: 100)
        queue.put([1, 2])
        var batch: [Int] = []
        let started = ContinuousClock.now
        #expect(queue.waitForBatch(min: 50, max: 100, timeoutSeconds: 0.05, into: &batch))
        #expect(batch == [1, 2])
        // Clock: the test's; a lower bound (load only lengthens a wait), 10 ms under the timeout for timer rounding.
        #expect(ContinuousClock.now - started >= .milliseconds(40))
    }

    /// A producer blocked on a full queue resumes once a quarter of it is free, and everything
    /// still arrives in order.
    @Test func aBlockedProducerResumesWhenAQuarterIsFree() {
        let queue = HandOffQueue<Int>(capacity: 8)
        let producer = Thread {
            var values = Array(0..<40)
            queue.put(moving: &values)
            queue.close()
        }
        producer.start()
        var all: [Int] = []
        while queue.waitForBatch(max: 1, timeoutSeconds: 1, into: &all) {}
        #expect(all == Array(0..<40))
    }

    @Test func aConsumerTakingIntoOptionalsGetsTheElementsInOrderAfterWhatItHeld() {
        let queue = HandOffQueue<String>(capacity: 8)
        var strings = (0..<5).map { "row \($0) " + String(repeating: "x", count: 30) }
        let expected = strings
        #expect(queue.put(moving: &strings) == 5)
        var batch: [String?] = ["already here"]
        queue.takeBatch(max: 4, into: &batch)
        #expect(batch == ["already here"] + expected[0..<4].map { $0 })
        batch.removeAll()
        queue.takeBatch(max: 4, into: &batch)
        #expect(batch == [expected[4]])
    }
}

@Suite struct HandOffQueueRoomWakeUpTests {
    @Test func theWakeUpComesOnceAConsumerHasFreedTheRoomAskedFor() {
        let queue = HandOffQueue<Int>(capacity: 8)
        #expect(queue.put(Array(0..<8)) == 8)
        let wakeUp = RoomWakeUp()
        wakeUp.arm()
        queue.wakeWhenRoom(4, wakeUp)
        var batch: [Int] = []
        queue.takeBatch(max: 3, into: &batch)
        #expect(!wakeUp.wait(timeoutSeconds: 0.01), "three free of the four asked for")
        queue.takeBatch(max: 1, into: &batch)
        #expect(wakeUp.wait(timeoutSeconds: 0.01))
    }

    @Test func theWakeUpComesAtOnceWhenThereIsRoomAndWhenTheQueueCloses() {
        let queue = HandOffQueue<Int>(capacity: 4)
        let wakeUp = RoomWakeUp()
        wakeUp.arm()
        queue.wakeWhenRoom(2, wakeUp)
        #expect(wakeUp.wait(timeoutSeconds: 0.01), "an empty queue has the room now")
        #expect(queue.put(Array(0..<4)) == 4)
        wakeUp.arm()
        queue.wakeWhenRoom(1, wakeUp)
        #expect(!wakeUp.wait(timeoutSeconds: 0.01))
        queue.close()
        #expect(wakeUp.wait(timeoutSeconds: 0.01), "a closed queue takes nothing more: its producer must look")
    }

    @Test func aWaiterOnAnotherThreadIsWokenByTheConsumer() {
        let queue = HandOffQueue<Int>(capacity: 4)
        #expect(queue.put(Array(0..<4)) == 4)
        let wakeUp = RoomWakeUp()
        wakeUp.arm()
        queue.wakeWhenRoom(2, wakeUp)
        let consumer = Thread {
            Thread.sleep(forTimeInterval: 0.02)
            var batch: [Int] = []
            queue.takeBatch(max: 2, into: &batch)
        }
        consumer.start()
        #expect(wakeUp.wait(timeoutSeconds: 5))
        #expect(queue.approximateCount == 2)
    }
}
