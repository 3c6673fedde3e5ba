/* SPDX-License-Identifier: MIT */
/* thread.h: the scene code's helper threads (a save's writer, a large file's second half
 * read, a load's share of pass one and its reading ahead) start with every signal
 * blocked: signals, and the crash guard that catches a plugin's faults, stay the main
 * thread's. */
#ifndef HOST_THREAD_H
#define HOST_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/* pthread_create(thread, NULL, run, arg) with every signal blocked in the new thread,
 * named name (at most 15 characters: what top -H, gdb and perf show for it): true when it
 * started. */
static inline bool host_thread_start(pthread_t *thread, void *(*run)(void *), void *arg,
                                     const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool started = pthread_create(thread, NULL, run, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started) pthread_setname_np(*thread, name); /* a name is only a label: not checked */
    return started;
}

#endif
