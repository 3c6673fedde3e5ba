/* log.c: the host's log lines on stderr, filtered by one global level. */
#include "log.h"

#include <stdio.h>

static ecs_log_level current_level = ECS_LOG_INFO;

void host_log_set_level(ecs_log_level level)
{
    current_level = level;
}

ecs_log_level host_log_level(void)
{
    return current_level;
}

void host_logv(ecs_log_level level, const char *who, const char *fmt, va_list ap)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if ((int)level > (int)current_level) return;
    unsigned i = (unsigned)level < 4u ? (unsigned)level : 3u;
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "[%s] %s: %s\n", names[i], who ? who : "ecs-host", line);
}

void host_log(ecs_log_level level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_logv(level, who, fmt, ap);
    va_end(ap);
}

void host_format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}
