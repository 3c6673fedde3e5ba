/* SPDX-License-Identifier: MIT */
/* signame.h: the names of the signals that stop plugin code (a crash, or a stop signal that
 * abandoned a call), for messages. Knows nothing but <signal.h>: any layer may use it. */
#ifndef HOST_SIGNAME_H
#define HOST_SIGNAME_H

#include <stdbool.h>

/* Is sig one host_guard_abandon() delivers (SIGINT, SIGTERM) rather than a crash? */
bool host_signame_is_stop(int sig);

/* "SIGSEGV" and so on. */
const char *host_signame(int sig);

/* What happened to a call stopped by sig, for messages: "crashed with SIGSEGV", or, for a
 * stop signal, "was abandoned at the second SIGINT". */
const char *host_signame_outcome(int sig);

#endif
