/* SPDX-License-Identifier: MIT */
/* watchdog.h: what SIGINT and SIGTERM do, and a thread that watches the plugin call running
 * on the main thread (guard.h's current call) so that they do the right thing.
 *
 * - The first signal asks the frame loop to stop (and --save to save): *stop becomes 1.
 *   When a plugin call has been running for a while then, one line says at once which
 *   and for how long, and what a second signal would do.
 * - A plugin call that has not returned for a second is stuck: one warning line, once per
 *   call, signal or not.
 * - A second (or later) signal matters only while a plugin call is stuck: under --safe
 *   the call is abandoned like a crash (guard.h) and the host goes on to save; without
 *   --safe the host ends at once with 128 + the signal and one line, unsaved. While
 *   nothing is stuck (the host saving, a frame running), the signal changes nothing but
 *   is remembered: a call that then stays stuck for a second is treated the same.
 * Signals that land on another thread (a plugin's) are passed to the main thread.
 */
#ifndef HOST_WATCHDOG_H
#define HOST_WATCHDOG_H

#include <signal.h>
#include <stdbool.h>

/* Install the SIGINT and SIGTERM handlers (from the main thread, after guard.h's
 * host_guard_report_install) and start the watching thread (ecs-watchdog). safe: --safe,
 * a stuck call may be abandoned. False with one line when the thread could not start
 * (the handlers are installed all the same, and a second signal then acts at once, as
 * if the call were stuck). */
bool host_watchdog_start(volatile sig_atomic_t *stop, bool safe);

/* Stop and join the watching thread (at exit). Nothing when it did not start. */
void host_watchdog_end(void);

#endif
