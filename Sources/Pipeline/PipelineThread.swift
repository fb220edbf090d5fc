import Dispatch
import Foundation
import Synchronization

/// A plain thread for the pipeline's long-running loops (reader, writer): no Swift concurrency on
/// the hot path. The completion lets another thread wait for it, with or without a timeout.
enum PipelineThread {
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> ThreadCompletion {
        let completion = ThreadCompletion()
        let thread = Thread {
            body()
            completion.finish()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        return completion
    }
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
