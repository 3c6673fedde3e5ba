/* SPDX-License-Identifier: MIT */
/* call.h: the call into owner (plugin) code running now on the main thread, named so that
 * another thread or a signal handler can tell whose code runs what, and since when.
 *
 * The main thread names every call into owner code (host_call_enter and host_call_leave,
 * two stores each; the world's guard hook does both around a guarded call). The sequence
 * number changes at every enter and leave, so a watcher that sees the same call and the
 * same number twice knows that call has not returned in between (the watchdog, above).
 *
 * Part of the core (host/world): knows nothing of plugins, files or signals.
 */
#ifndef HOST_CALL_H
#define HOST_CALL_H

#include <stdatomic.h>
#include <stdint.h>

/* A call into owner code, named for messages: "plugin 'rl' ... update of 'rl'". The
 * strings must stay valid while the call runs (they are a record's own). */
typedef struct host_call {
    const char *plugin; /* the owner's name (NULL: not known yet) */
    const char *what;   /* "update", "load()", "write_component", ... */
    const char *of;     /* the manager or system, or NULL */
} host_call;

/* The call running now on the main thread (NULL: host code) and a number that changes at
 * every enter and leave. Written by the main thread only. */
extern _Atomic(const host_call *) host_call_now;
extern _Atomic(uint64_t) host_call_seq;

/* Mark c as the owner call running now; returns the call it replaces (pass it to
 * host_call_leave). Main thread only: two stores, no clock. */
static inline const host_call *host_call_enter(const host_call *c)
{
    const host_call *was = atomic_load_explicit(&host_call_now, memory_order_relaxed);
    uint64_t seq = atomic_load_explicit(&host_call_seq, memory_order_relaxed);
    atomic_store_explicit(&host_call_now, c, memory_order_release);
    atomic_store_explicit(&host_call_seq, seq + 1, memory_order_release);
    return was;
}

/* The call c returned: was (from host_call_enter) runs again, or host code. */
static inline void host_call_leave(const host_call *was)
{
    uint64_t seq = atomic_load_explicit(&host_call_seq, memory_order_relaxed);
    atomic_store_explicit(&host_call_now, was, memory_order_release);
    atomic_store_explicit(&host_call_seq, seq + 1, memory_order_release);
}

#endif
