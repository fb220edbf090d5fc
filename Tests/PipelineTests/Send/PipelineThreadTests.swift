import Synchronization
import Testing
@testable import Pipeline

@Suite struct PipelineThreadTests {
    private static func policy(batch: Bool) -> Bool {
        let seen = Mutex<Bool?>(nil)
        PipelineThread.start(name: "apns-bulk test", batch: batch) {
            seen.withLock { $0 = PipelineThread.callingThreadIsBatch }
        }.wait()
        return seen.withLock { $0 } ?? !batch
    }

    /// The reader and writer are started so: their wake-ups must not preempt the reactor threads.
    @Test func aBatchThreadRunsAsBatchWorkAndOthersDoNot() {
        #expect(Self.policy(batch: true))
        #expect(!Self.policy(batch: false))
    }
}
