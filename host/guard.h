/* guard.h: --safe: a crash inside plugin code is caught instead of killing the host.
 *
 * A jump point is armed only while plugin code runs (host_guard_run); the handlers of
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (on an alternate stack, so a stack
 * overflow is caught too) jump back to it. A fault while no jump point is armed is the
 * host's own: the default action is restored and the signal raised again, never
 * swallowed. Without --safe nothing is installed and a crash is a crash (debuggers work).
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

/* "SIGSEGV" and so on. */
const char *host_guard_signal_name(int sig);

#endif
