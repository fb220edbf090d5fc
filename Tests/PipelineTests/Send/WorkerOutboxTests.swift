import Foundation
import Testing
import Transport
@testable import Pipeline

/// A worker's outbox, as both workers use it: records reach the writer's queue in order and in
/// batches, spent jobs go back to the reader in batches, the ready list refills from the work
/// queue and asks once to be woken, retries wait on their backoff, and a stop ends every job held
/// back exactly once.
@Suite struct WorkerOutboxTests {
    /// The outbox and a worker's ready list, touched only on the reactor's thread.
    // Confined to the reactor's thread: the tests reach it only inside `onReactor`.
    final class Desk: @unchecked Sendable {
        let reactor: Reactor
        let outcomes = HandOffQueue<RowResult>(capacity: 4096)
        let work = HandOffQueue<Job>(capacity: 1024)
        let jobPool = JobPool()
        let outbox: WorkerOutbox
        var ready = JobQueue()

        init() throws {
            reactor = try Reactor.start(name: "outbox-test")
            outbox = WorkerOutbox(reactor: reactor, outcomes: outcomes, jobPool: jobPool)
        }

        deinit {
            reactor.stop()
            reactor.join()
        }

        /// Runs `body` on the reactor's thread and waits until it returned. Unowned: the desk's
        /// last reference is the test's, so that `deinit` runs on the test's thread.
        func onReactor<Value: Sendable>(_ body: @escaping @Sendable (Desk) -> Value) -> Value {
            let result = Locked<Value?>(nil)
            let done = DispatchSemaphore(value: 0)
            reactor.execute { [unowned self] in
                let value = body(self)
                result.change { $0 = value }
                done.signal()
            }
            done.wait()
            return result.value!
        }

        /// What the writer would read now, in order.
        func published() -> [RowResult] {
            var records: [RowResult] = []
            outcomes.takeBatch(max: .max, into: &records)
            return records
        }
    }

    /// A value both threads change, behind a lock.
    final class Locked<Value: Sendable>: @unchecked Sendable {
        // Shared by the two threads behind `lock`.
        private let lock = NSLock()
        private var stored: Value

        init(_ value: Value) { stored = value }

        var value: Value { lock.withLock { stored } }

        func change(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }

        /// Waits (two seconds at most) until `condition` holds.
        func wait(until condition: (Value) -> Bool) -> Bool {
            for _ in 0..<200 {
                if condition(value) { return true }
                usleep(10_000)
            }
            return condition(value)
        }
    }

    static func job(_ row: Int) -> Job {
        Job(row: row, RowBytes(copying: Array(String(repeating: "ab", count: 32).utf8)[...], lowercaseToken: nil,
                               payload: Array("{}".utf8)[...], headers: nil))
    }

    static func delivered(_ row: Int) -> RowResult {
        RowResult(row: row, deviceToken: Array("ab".utf8)[...], outcome: .delivered, status: 200, attempts: 1)
    }

    @Test func recordsReachTheWriterInOrderOnceABatchIsFull() throws {
        let desk = try Desk()
        let published = desk.onReactor { desk in
            for row in 1..<WorkerOutbox.batchSize { desk.outbox.finish(Self.delivered(row)) }
            let beforeFull = desk.outcomes.approximateCount
            desk.outbox.finish(Self.delivered(WorkerOutbox.batchSize))
            return (beforeFull, desk.outcomes.approximateCount)
        }
        #expect(published.0 == 0, "nothing goes out before a batch is full or the turn ends")
        #expect(published.1 == WorkerOutbox.batchSize, "the record that fills the batch sends it")
        #expect(desk.published().map(\.row) == Array(1...WorkerOutbox.batchSize))
    }

    @Test func aScheduledPublishSendsTheTurnsRecordsOnceTheTurnIsOver() throws {
        let desk = try Desk()
        let duringTurn = desk.onReactor { desk in
            desk.outbox.finish(Self.delivered(1))
            desk.outbox.schedulePublish()
            desk.outbox.finish(Self.delivered(2))
            desk.outbox.schedulePublish()
            return desk.outcomes.approximateCount
        }
        #expect(duringTurn == 0, "published at the end of the turn, not inside it")
        // The turn that ran the scheduled publish is over once this later work runs.
        _ = desk.onReactor { _ in true }
        #expect(desk.published().map(\.row) == [1, 2])
        let later = desk.onReactor { desk in
            desk.outbox.finish(Self.delivered(3))
            desk.outbox.schedulePublish()
            return true
        }
        #expect(later)
        _ = desk.onReactor { _ in true }
        #expect(desk.published().map(\.row) == [3], "a publish scheduled in a later turn goes out too")
    }

    @Test func spentJobsGoBackToTheReaderAFullBatchAtATime() throws {
        let desk = try Desk()
        let beforeFull = desk.onReactor { desk in
            for row in 1..<JobPool.batchSize {
                let job = Self.job(row)
                _ = job.takeDeviceToken()
                desk.outbox.recycle(consume job)
            }
            return desk.jobPool.take() == nil
        }
        #expect(beforeFull, "no batch goes back before it is full")
        let batch = desk.onReactor { desk in
            let job = Self.job(JobPool.batchSize)
            _ = job.takeDeviceToken()
            desk.outbox.recycle(consume job)
            return desk.jobPool.take()?.count
        }
        #expect(batch == JobPool.batchSize)
    }

    @Test func theReadyListRefillsABatchAtATimeAndAsksOnceToBeWokenWhenTheQueueRunsDry() throws {
        let desk = try Desk()
        let wakeUps = Locked(0)
        let taken = desk.onReactor { desk in
            desk.outbox.workArrived = { wakeUps.change { $0 += 1 } }
            desk.work.put((1...300).map(Self.job))
            return (0..<4).map { _ in desk.outbox.refill(&desk.ready, from: desk.work) }
        }
        #expect(taken == [WorkerOutbox.takeSize, 300 - WorkerOutbox.takeSize, 0, 0])
        #expect(wakeUps.value == 0)
        desk.work.put(Self.job(301))
        #expect(wakeUps.wait { $0 == 1 }, "the put after the queue ran dry wakes the worker")
        // Not asked again since: a later put wakes nobody.
        desk.work.put(Self.job(302))
        _ = desk.onReactor { _ in true }
        _ = desk.onReactor { _ in true }
        #expect(wakeUps.value == 1, "woken once, however often the empty queue was found")
        let rows = desk.onReactor { desk in
            _ = desk.outbox.refill(&desk.ready, from: desk.work)
            var rows: [Int] = []
            while let job = desk.ready.popFirst() { rows.append(job.row) }
            return rows
        }
        #expect(rows == Array(1...302), "the ready list keeps the queue's order")
    }

    @Test func aRetryComesBackWhenItsBackoffIsOver() throws {
        let desk = try Desk()
        let due = Locked<[Int]>([])
        let held = desk.onReactor { desk in
            desk.outbox.holdForRetry(Self.job(7), milliseconds: 5) { job in due.change { $0.append(job.row) } }
            return desk.outbox.holdsRetries
        }
        #expect(held)
        #expect(due.wait { $0 == [7] })
        #expect(desk.onReactor { desk in desk.outbox.holdsRetries } == false)
    }

    @Test func aStopEndsEveryHeldJobOnceTheReadyListFirstThenTheRetries() throws {
        let desk = try Desk()
        let control = RunControl()
        _ = control.stop(.interrupted(signal: 15))
        let stop = RunStop(control: control, work: desk.work, outcomes: desk.outcomes)
        let dues = Locked<[Int]>([])
        let held = desk.onReactor { desk in
            for row in 1...3 { desk.ready.pushBack(Self.job(row)) }
            for row in 4...5 {
                desk.outbox.holdForRetry(Self.job(row), milliseconds: 20) { job in dues.change { $0.append(job.row) } }
            }
            desk.outbox.endHeldJobs(&desk.ready, as: stop)
            desk.outbox.publish()
            return !desk.ready.isEmpty || desk.outbox.holdsRetries
        }
        #expect(!held, "nothing is held back after the stop")
        let records = desk.published()
        #expect(records.prefix(3).map(\.row) == [1, 2, 3])
        #expect(Set(records.dropFirst(3).map(\.row)) == [4, 5])
        #expect(records.count == 5 && records.allSatisfy { $0.outcome == .aborted })
        // Well past the retries' backoff: their timers were cancelled, so they never come back.
        usleep(150_000)
        _ = desk.onReactor { _ in true }
        #expect(dues.value.isEmpty, "no retry came due after the stop")
        #expect(desk.published().isEmpty)
    }
}
