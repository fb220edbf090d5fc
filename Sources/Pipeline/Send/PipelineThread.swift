import Dispatch
import Foundation
import Synchronization
import Transport

/// A plain thread for the pipeline's long-running loops (reader, writer): no Swift concurrency on
/// the hot path. The completion lets another thread wait for it, with or without a timeout.
enum PipelineThread {
    /// `batch`: the thread is throughput work with a queue on each side (the reader, the writer),
    /// and runs as Linux's SCHED_BATCH: the same share of the CPU, but its wake-ups do not preempt
    /// a running thread, so the reactor threads, whose answers and frames wait on them, keep their
    /// core when the machine has none spare. Measured unpinned on this 2-core machine, 1M rows, the
    /// bench's mock on the same cores (benchmarks/RESULTS.md, session 16): the whole process's wall
    /// time and its CPU time both fell. Where the call is refused (a seccomp profile), the thread
    /// simply runs as before.
    static func start(name: String, batch: Bool = false, _ body: @escaping @Sendable () -> Void) -> ThreadCompletion {
        let completion = ThreadCompletion()
        let thread = Thread {
            // Foundation keeps `name` to itself on Linux: the kernel's name is what `top -H` and `ps -L` show.
            CurrentThread.setName(name, fallback: "apns-bulk")
            if batch { CurrentThread.runAsBatch() }
            body()
            completion.finish()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        return completion
    }

    /// The calling thread runs as SCHED_BATCH (for the tests).
    static var callingThreadIsBatch: Bool { CurrentThread.isBatch }
}

final class ThreadCompletion: Sendable {
    private let finished = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    var isFinished: Bool { finished.load(ordering: .acquiring) }

    fileprivate func finish() {
        finished.store(true, ordering: .releasing)
        semaphore.signal()
    }

    func wait() {
        while !isFinished { wait(timeoutSeconds: 1) }
    }

    func wait(timeoutSeconds: Double) {
        if semaphore.wait(timeout: .now() + timeoutSeconds) == .success {
            semaphore.signal()  // stays signalled for every later waiter
        }
    }
}
