import CLinux
import Glibc

/// What Linux keeps of the calling thread: the name `top -H` and `ps -L` show, and its scheduling
/// class. For the transport's own threads and for the pipeline's (reader, writer).
package enum CurrentThread {
    /// Names the calling thread `name` cut to the 15 bytes Linux keeps, or `fallback` when the cut
    /// would split a character.
    package static func setName(_ name: String, fallback: String) {
        _ = apnsbulk_set_thread_name(String(name.utf8.prefix(15)) ?? fallback)
    }

    /// Runs the calling thread as SCHED_BATCH: the same share of the CPU, but its wake-ups no longer
    /// preempt a running thread. Where the call is refused (a seccomp profile) nothing changes.
    package static func runAsBatch() {
        _ = apnsbulk_schedule_as_batch()
    }

    /// The calling thread runs as SCHED_BATCH.
    package static var isBatch: Bool { sched_getscheduler(0) == SCHED_BATCH }
}
