#ifndef APNS_BULK_CLINUX_SHIM_H
#define APNS_BULK_CLINUX_SHIM_H
/* The Linux calls the reactor needs that Swift's Glibc module leaves out: epoll, eventfd,
   prctl and SCHED_BATCH; and compiler builtins, prefetch and an atomic OR. Part of libc or the
   compiler, so nothing to link. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sched.h>
#include <linux/sched.h>
#include <stdint.h>

/* Names the calling thread (prctl is variadic; pthread_setname_np needs _GNU_SOURCE). */
static inline int apnsbulk_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* Starts loading the cache line at `address` for writing, without waiting for it (Swift has no
   prefetch of its own): the duplicate filter's inserts otherwise stall on a cache miss each. */
static inline void apnsbulk_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/* Marks the calling thread as batch work (SCHED_BATCH, which needs _GNU_SOURCE in <sched.h>):
   it keeps its share of the CPU, but its wake-ups no longer preempt the running thread. */
static inline int apnsbulk_schedule_as_batch(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_BATCH, &param);
}

/* Sets bit `bit` of the bitmap at `words` (bit b of word b / 64), atomically: several reactor
   threads mark rows of one bitmap, some in the same word (Swift's Atomic cannot live in a file
   mapping). Relaxed: the bit orders nothing else, and a kill leaves it in the page cache. */
static inline void apnsbulk_set_bit(uint64_t *words, uint64_t bit) {
    __atomic_fetch_or(&words[bit >> 6], (uint64_t)1 << (bit & 63), __ATOMIC_RELAXED);
}
/* Clears bit `bit` (a row held back after its answer: its resend would duplicate nothing). */
static inline void apnsbulk_clear_bit(uint64_t *words, uint64_t bit) {
    __atomic_fetch_and(&words[bit >> 6], ~((uint64_t)1 << (bit & 63)), __ATOMIC_RELAXED);
}
#endif
