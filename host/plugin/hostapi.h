/* SPDX-License-Identifier: MIT */
/* hostapi.h: the table of host functions each plugin gets (hostapi.c: entities, managers,
 * APIs, log, memory, scenes; hostapi_query.c: views, collections, systems), and what every
 * call checks first: the calling thread (hostapi_check.c, with names and refusals).
 */
#ifndef HOST_HOSTAPI_H
#define HOST_HOSTAPI_H

#include <stdbool.h>

#include "ecs_plugin.h"

typedef struct host_session host_session;
typedef struct host_plugin host_plugin;
typedef struct host_manager host_manager;
typedef struct host_system host_system;

/* Fill p->table for plugin p. */
void host_api_init(host_plugin *p);

/* Refuse a plugin's call: one error line naming the plugin and the call; during load() the
 * first refusal is also kept as the plugin's reason. Returns s. (hostapi_check.c) */
ecs_status host_api_refuse(host_plugin *p, ecs_status s, const char *call, const char *what);

/* Is s a good manager or system name: 1-63 of [A-Za-z0-9_.-]? (hostapi_check.c) */
bool host_api_valid_name(const char *s);

/* The manager called name, committed (not self's own while self reloads: it registers them
 * again) or pending in self; NULL when none. (hostapi_check.c) */
host_manager *host_manager_named(host_session *hs, host_plugin *self, const char *name);

/* Fill the table entries of views, collections and systems. (hostapi_query.c) */
void host_api_init_query(ecs_host *t);

/* The system called name, committed (not p's own while p reloads) or pending in p; NULL
 * when none. (hostapi_query.c) */
host_system *host_system_named(host_session *hs, host_plugin *p, const char *name);

/* At a frame boundary, on the main thread: one error line per plugin of hs whose code
 * called the host from another thread since the last report (the count and the first
 * call). */
void host_api_report_thread_calls(host_session *hs);

/* Free a system record. */
void host_system_free(host_system *s);

/* Fill the table entries of jobs. (hostapi_jobs.c) */
void host_api_init_jobs(ecs_host *t);

/* Run fn(arg), a chunk of a job, on this thread: under the crash guard (host_guard_catch:
 * 0, or the signal that stopped it), with the thread marked as in a job, so host calls not
 * tagged [job] are refused. The world's pool runs every chunk through it. (hostapi_jobs.c) */
int host_api_job_guard(void (*fn)(void *), void *arg);

/* The host table is for the thread that runs the frames: true on it, but for the time it
 * runs a chunk of a job. The thread that makes the first session claims it
 * (host_session_new). */
extern _Thread_local bool host_on_main_thread;

/* A host call from another thread: counted for the plugin of h (thread-safe), reported by
 * host_api_report_thread_calls. */
void host_api_other_thread(const ecs_host *h, const char *call);

/* First in every host table function: refuse a call from another thread, returning
 * `refusal` (HOST_MAIN_THREAD: nothing, in a void function). One thread-local read
 * otherwise. */
#define HOST_MAIN_THREAD_OR(h, call, refusal)                                                      \
    do {                                                                                           \
        if (__builtin_expect(!host_on_main_thread, 0)) {                                           \
            host_api_other_thread(h, call);                                                        \
            return refusal;                                                                        \
        }                                                                                          \
    } while (0)
#define HOST_MAIN_THREAD(h, call)                                                                  \
    do {                                                                                           \
        if (__builtin_expect(!host_on_main_thread, 0)) {                                           \
            host_api_other_thread(h, call);                                                        \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#endif
