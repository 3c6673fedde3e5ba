/* SPDX-License-Identifier: MIT */
/* guard.h: plugin code under watch. --safe: a crash inside plugin code is caught instead of
 * killing the host; always: a crash says in one line where it happened, and the plugin call
 * running now is known (for the watchdog, watchdog.h).
 *
 * The current call: the main thread names every call into plugin code (host_call_enter
 * and host_call_leave, two stores; host_guard_call does both around a guarded call), so
 * another thread or a signal handler can tell which plugin runs what, and since when (the
 * sequence number changes at every call).
 *
 * Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT; handlers installed at start, on an
 * alternate stack so a stack overflow is caught too): on the main thread while a jump point
 * is armed (--safe, host_guard_call), the handler jumps back to it. Anything else is a
 * crash: one line naming the call that ran, the plugin whose code the fault is in (dladdr
 * against the libraries noted with host_guard_library), the address; then the default
 * action, as the signal would have ended the process (core dumps and debuggers work). A
 * worker of the host's job pool running a chunk under host_guard_catch jumps back to its
 * own point; a fault on any other thread is never jumped from: plugin threads are the
 * plugin's own risk. A second SIGINT/SIGTERM abandons plugin code that never returns
 * through the same jump point (host_guard_abandon, watchdog.c).
 */
#ifndef HOST_GUARD_H
#define HOST_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "signame.h" /* the call running now, named: the core's */

/* "plugin 'x' has been running update of 'm'" for the current call into buf (cut to size,
 * NUL-terminated): its length, 0 when host code runs. Main thread, async-signal-safe: the
 * call's strings are read where they are owned. */
size_t host_guard_describe(char *buf, size_t size);

/* Install the fault handlers that report a crash (once, from the main thread, which they
 * take as the thread that runs plugin code). False with an error logged when that failed. */
bool host_guard_report_install(void);

/* --safe: faults in plugin code on the main thread jump back to the armed point. Installs
 * the handlers too. False with an error logged when that failed. */
bool host_guard_install(void);

/* True once --safe is on. */
bool host_guard_active(void);

/* Run fn(arg) as call c (NULL: a call named by an outer one): directly when --safe is off
 * or a jump point is already armed (the outer one covers nested plugin calls). Returns 0,
 * or the number of the signal that stopped fn. After a caught signal the plugin's state
 * must be taken as corrupt. */
int host_guard_call(const host_call *c, void (*fn)(void *), void *arg);

/* Run fn(arg), a chunk of a job, on the calling thread (the main thread or a worker of the
 * host's job pool) under a jump point of its own: with --safe a fault in it returns its
 * signal number instead of ending the process, whatever point an enclosing call armed
 * (that point is armed again after). 0 when fn returned. The first such fault is also
 * kept for the guarded call running on the main thread (host_guard_call): when it returns,
 * it returns that signal as if its own code had crashed. Without --safe fn runs directly,
 * and a fault on a worker is reported as a job of the plugin running now. */
int host_guard_catch(void (*fn)(void *), void *arg);

/* host_guard_call(NULL, fn, arg). */
int host_guard_run(void (*fn)(void *), void *arg);

/* The library dl (from dlopen) holds plugin `plugin`'s code: a crash in it names the
 * plugin. host_guard_library_gone before it is closed. Main thread. */
void host_guard_library(void *dl, const char *plugin);
void host_guard_library_gone(void *dl);

/* From a SIGINT or SIGTERM handler on the main thread (async-signal-safe): when plugin code
 * runs under an armed jump point, jump back to it as if that code had crashed with sig (it
 * never returns then); false when nothing is armed. The caller of host_guard_call() sees
 * sig, and must take the plugin's state as corrupt, like after a crash. */
bool host_guard_abandon(int sig);

/* Is the calling thread the one the handlers were installed from (async-signal-safe)? */
bool host_guard_on_main_thread(void);

#endif
