/* SPDX-License-Identifier: MIT */
/* guard.h: --safe: a crash inside plugin code is caught instead of killing the host.
 *
 * A jump point is armed only while plugin code runs (host_guard_run); the handlers of
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (on an alternate stack, so a stack
 * overflow is caught too) jump back to it. A fault while no jump point is armed is the
 * host's own: the default action is restored and the signal raised again, never
 * swallowed. Without --safe nothing is installed and a crash is a crash (debuggers work).
 * A second SIGINT/SIGTERM abandons plugin code that never returns the same way
 * (host_guard_abandon, called from main.c's signal handler).
 */
#ifndef HOST_GUARD_H
#define HOST_GUARD_H

#include <stdbool.h>

/* Install the handlers (once). False with an error logged when that failed. */
bool host_guard_install(void);

/* True once installed. */
bool host_guard_active(void);

/* Run fn(arg): directly when the guard is not installed or a jump point is already armed
 * (the outer one covers nested plugin calls). Returns 0, or the number of the signal
 * that stopped fn. After a caught signal the plugin's state must be taken as corrupt. */
int host_guard_run(void (*fn)(void *), void *arg);

/* From a SIGINT or SIGTERM handler (async-signal-safe): when plugin code runs under an
 * armed jump point, jump back to it as if that code had crashed with sig (it never
 * returns then); false when nothing is armed. The caller of host_guard_run() sees sig,
 * and must take the plugin's state as corrupt, like after a crash. */
bool host_guard_abandon(int sig);

/* Is sig one host_guard_abandon() delivers (SIGINT, SIGTERM) rather than a crash? */
bool host_guard_is_stop(int sig);

/* "SIGSEGV" and so on. */
const char *host_guard_signal_name(int sig);

#endif
