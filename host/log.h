/* log.h: the host's log: one line per message on stderr, "[level] who: message".
 *
 * `who` names the part of the host or the plugin speaking, so every line says where a
 * problem is. The level filter is global (set from -v / -q).
 */
#ifndef HOST_LOG_H
#define HOST_LOG_H

#include "ecs_plugin.h"

/* Show messages up to and including this level (default ECS_LOG_INFO). */
void host_log_set_level(ecs_log_level level);
ecs_log_level host_log_level(void);

/* Log one line. who may be NULL (then "ecs-host"). */
void host_log(ecs_log_level level, const char *who, const char *fmt, ...) ECS_PRINTF(3, 4);
void host_logv(ecs_log_level level, const char *who, const char *fmt, va_list ap);

/* snprintf for messages, where cutting a long one short is the right outcome (and the
 * compiler is told so). */
void host_format(char *buf, size_t size, const char *fmt, ...) ECS_PRINTF(3, 4);

#define host_error(who, ...) host_log(ECS_LOG_ERROR, who, __VA_ARGS__)
#define host_warn(who, ...)  host_log(ECS_LOG_WARN, who, __VA_ARGS__)
#define host_info(who, ...)  host_log(ECS_LOG_INFO, who, __VA_ARGS__)
#define host_debug(who, ...) host_log(ECS_LOG_DEBUG, who, __VA_ARGS__)

#endif
