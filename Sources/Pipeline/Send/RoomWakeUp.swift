#if canImport(Glibc)
import Glibc
#endif

/// What a producer waits on for room in a full queue, woken by another thread: the reader of a
/// campaign with several credential groups waits on one for room in any of the group queues its
/// parked rows are for (each queue wakes it once a consumer has taken enough,
/// `HandOffQueue.wakeWhenRoom`), rather than polling them all every 200 µs — a context switch each
/// time on the client's one core, thousands a second while every queue is full.
///
/// Shared by the threads that wake it and the one that waits, behind its pthread mutex.
final class RoomWakeUp: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let woken = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Woken since the last `arm()`; touched only under the mutex.
    private var awake = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(woken, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(woken)
        pthread_mutex_destroy(mutex)
        woken.deallocate()
        mutex.deallocate()
    }

    /// Forgets earlier wake-ups: call before handing it to those who will wake it, so that a
    /// wake-up between that and `wait` is not lost and one before it does not count.
    func arm() {
        pthread_mutex_lock(mutex)
        awake = false
        pthread_mutex_unlock(mutex)
    }

    func wake() {
        pthread_mutex_lock(mutex)
        awake = true
        pthread_cond_signal(woken)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until woken since `arm()`, or `timeoutSeconds`; true when it was woken.
    @discardableResult
    func wait(timeoutSeconds: Double) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !awake {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanos = Int(timeoutSeconds * 1e9) + deadline.tv_nsec
            deadline.tv_sec += nanos / 1_000_000_000
            deadline.tv_nsec = nanos % 1_000_000_000
            while !awake {
                if pthread_cond_timedwait(woken, mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        return awake
    }
}
