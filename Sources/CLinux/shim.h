#ifndef APNS_BULK_CLINUX_SHIM_H
#define APNS_BULK_CLINUX_SHIM_H
/* The Linux calls the reactor needs that Swift's Glibc module leaves out: epoll, eventfd and
   prctl. Part of libc, so nothing to link. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/* Names the calling thread (prctl is variadic; pthread_setname_np needs _GNU_SOURCE). */
static inline int apnsbulk_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#endif
