#if canImport(Glibc)
import Glibc
#endif

/// A wake-up a thread waits for, rung by another: the reader of a campaign with several credential
/// groups waits on one for room in any of the group queues its parked rows are for (each queue rings
/// it once a consumer has taken enough), rather than polling them all every 200 µs — a context switch
/// each time on the client's one core, thousands a second while every queue is full.
///
/// Shared by the threads that ring it and the one that waits, behind its pthread mutex.
final class Doorbell: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let rung = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Rung since the last `arm()`; touched only under the mutex.
    private var ringing = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(rung, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(rung)
        pthread_mutex_destroy(mutex)
        rung.deallocate()
        mutex.deallocate()
    }

    /// Forgets earlier rings: call before handing the bell to those who will ring it, so that a
    /// ring between that and `wait` is not lost and one before it does not count.
    func arm() {
        pthread_mutex_lock(mutex)
        ringing = false
        pthread_mutex_unlock(mutex)
    }

    func ring() {
        pthread_mutex_lock(mutex)
        ringing = true
        pthread_cond_signal(rung)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until rung since `arm()`, or `timeoutSeconds`; true when it was rung.
    @discardableResult
    func wait(timeoutSeconds: Double) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !ringing {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanos = Int(timeoutSeconds * 1e9) + deadline.tv_nsec
            deadline.tv_sec += nanos / 1_000_000_000
            deadline.tv_nsec = nanos % 1_000_000_000
            while !ringing {
                if pthread_cond_timedwait(rung, mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        return ringing
    }
}
