/* SPDX-License-Identifier: MIT */
/* log.h: the host's log: one line per message on stderr, "[level] who: message".
 *
 * `who` names the part of the host or the plugin speaking, so every line says where a
 * problem is. The filter is global: -q errors only; default errors, warnings and info;
 * -v also the host's detail lines (host_detail); -vv also debug lines (plugins'). Control
 * characters and invalid UTF-8 in a message are escaped: one message, one line.
 */
#ifndef HOST_LOG_H
#define HOST_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include "ecs_plugin.h"

/* Show messages up to and including this level (default ECS_LOG_INFO). */
void host_log_set_level(ecs_log_level level);
ecs_log_level host_log_level(void);

/* The filter from the command line's count of -v (-1 for -q). */
void host_log_set_verbosity(int verbosity);

/* Are detail lines shown (-v)? For a caller that would format something costly. */
bool host_log_detail_on(void);

/* Where lines go (NULL: stderr), whether they start with the milliseconds since this call
 * (--log-time), and colour: 1 always, 0 never, -1 when the stream is a terminal and
 * NO_COLOR is not set to something (no-color.org: an explicit option overrides it). */
void host_log_configure(FILE *stream, bool time, int colour);

/* Also hand every line that is shown to fn (the inspector's log ring): its level as an
 * ecs_log_level (a detail line counts as info), who and the escaped message. NULL: none. */
void host_log_set_listener(void (*fn)(void *ctx, int level, const char *who, const char *msg),
                           void *ctx);

/* in escaped into out (size bytes with the NUL): printable ASCII and valid UTF-8 as they
 * are, \n, \t, and \xNN for every other byte; cut at a whole escape. Returns the length. */
size_t host_log_escape(char *out, size_t size, const char *in);

/* A detail line (shown from -v on). */
void host_detail(const char *who, const char *fmt, ...) ECS_PRINTF(2, 3);

/* Log one line. who may be NULL (then "ecs-host"). */
void host_log(ecs_log_level level, const char *who, const char *fmt, ...) ECS_PRINTF(3, 4);
void host_logv(ecs_log_level level, const char *who, const char *fmt, va_list ap);

/* Log one line from a thread that is not the main one (the watchdog): formatted the same,
 * written with one write(2), not handed to the listener (which runs on the main thread). */
void host_log_from_thread(ecs_log_level level, const char *who, const char *fmt, ...)
    ECS_PRINTF(3, 4);

/* snprintf for messages, where cutting a long one short is the right outcome (and the
 * compiler is told so). */
void host_format(char *buf, size_t size, const char *fmt, ...) ECS_PRINTF(3, 4);

#define host_error(who, ...) host_log(ECS_LOG_ERROR, who, __VA_ARGS__)
#define host_warn(who, ...)  host_log(ECS_LOG_WARN, who, __VA_ARGS__)
#define host_info(who, ...)  host_log(ECS_LOG_INFO, who, __VA_ARGS__)
#define host_debug(who, ...) host_log(ECS_LOG_DEBUG, who, __VA_ARGS__)

#endif
