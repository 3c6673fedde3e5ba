/* SPDX-License-Identifier: MIT */
/* log.c: the host's log lines on stderr, filtered by one global rank (log.h).
 *
 * Ranks: 0 error, 1 warn, 2 info, 3 detail (the host's own "what I decided and why"
 * lines, -v), 4 debug (plugins' debug lines too, -vv). A line is "[level] who: message",
 * optionally preceded by the milliseconds since the log was configured (--log-time) and
 * with the level coloured on a terminal. Every byte of the message and of `who` that could
 * forge or garble a line (control characters, DEL, bytes that are not UTF-8) is written
 * escaped (\n, \t, \xNN), so a name or a message from a plugin or a file stays on its
 * one line.
 */
#include "log.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { RANK_DETAIL = 3, RANK_DEBUG = 4 };

static int current_rank = ECS_LOG_INFO;
static FILE *sink; /* NULL: stderr */
static bool with_time, with_colour;
static struct timespec origin;

static int rank_of(ecs_log_level level)
{
    return level == ECS_LOG_DEBUG ? RANK_DEBUG : (int)level;
}

void host_log_set_level(ecs_log_level level)
{
    current_rank = rank_of(level);
}

ecs_log_level host_log_level(void)
{
    return current_rank >= RANK_DEBUG     ? ECS_LOG_DEBUG
           : current_rank >= ECS_LOG_INFO ? ECS_LOG_INFO
                                          : (ecs_log_level)current_rank;
}

void host_log_set_verbosity(int verbosity)
{
    current_rank = verbosity < 0    ? ECS_LOG_ERROR
                   : verbosity == 0 ? ECS_LOG_INFO
                   : verbosity == 1 ? RANK_DETAIL
                                    : RANK_DEBUG;
}

bool host_log_detail_on(void)
{
    return current_rank >= RANK_DETAIL;
}

void host_log_configure(FILE *stream, bool time, int colour)
{
    sink = stream;
    with_time = time;
    clock_gettime(CLOCK_MONOTONIC, &origin);
    FILE *out = stream ? stream : stderr;
    const char *no_colour = getenv("NO_COLOR"); /* no-color.org: set and not empty */
    with_colour = colour > 0 || (colour < 0 && isatty(fileno(out)) && !(no_colour && *no_colour));
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 when invalid. */
static size_t utf8_length(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0xC2 ? 0 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : p[0] < 0xF5 ? 4 : 0;
    if (!len || len > n) return 0;
    for (size_t k = 1; k < len; k++)
        if ((p[k] & 0xC0u) != 0x80u) return 0;
    uint32_t cp = p[0] & (0x7Fu >> len);
    for (size_t k = 1; k < len; k++) cp = cp << 6 | (p[k] & 0x3Fu);
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    if (cp >= 0x80 && cp <= 0x9F) return 0; /* C1 controls: escaped like C0 */
    return len;
}

size_t host_log_escape(char *out, size_t size, const char *in)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t n = strlen(in), used = 0;
    if (!size) return 0;
    for (size_t i = 0; i < n;) {
        char esc[8] = "";
        size_t take = 1;
        if (p[i] >= 0x20 && p[i] < 0x7F) {
            esc[0] = (char)p[i];
            esc[1] = '\0';
        } else if (p[i] >= 0x80 && (take = utf8_length(p + i, n - i)) > 0) {
            memcpy(esc, p + i, take);
            esc[take] = '\0';
        } else {
            take = 1;
            if (p[i] == '\n')
                strcpy(esc, "\\n");
            else if (p[i] == '\t')
                strcpy(esc, "\\t");
            else
                snprintf(esc, sizeof esc, "\\x%02X", p[i]);
        }
        size_t len = strlen(esc);
        if (used + len >= size) break; /* cut at a whole character or escape */
        memcpy(out + used, esc, len);
        used += len;
        i += take;
    }
    out[used] = '\0';
    return used;
}

static void (*listener)(void *ctx, int level, const char *who, const char *msg);
static void *listener_ctx;

void host_log_set_listener(void (*fn)(void *ctx, int level, const char *who, const char *msg),
                           void *ctx)
{
    listener = fn;
    listener_ctx = ctx;
}

/* One line at rank (0..4) into line (with its newline, cut to size); msg and name get the
 * escaped message and who. Returns the line's length. */
static size_t format_line(char *line, size_t size, char msg[4096], char name[256], int rank,
                          const char *who, const char *fmt, va_list ap)
{
    static const char *const names[] = {"error", "warn", "info", "detail", "debug"};
    static const char *const colours[] = {"\033[1;31m", "\033[33m", "\033[32m", "\033[36m",
                                          "\033[2m"};
    char raw[2048], stamp[32] = "";
    vsnprintf(raw, sizeof raw, fmt, ap);
    host_log_escape(msg, 4096, raw);
    host_log_escape(name, 256, who ? who : "ecs-host");
    if (with_time) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double ms = (double)(now.tv_sec - origin.tv_sec) * 1e3 +
                    (double)(now.tv_nsec - origin.tv_nsec) / 1e6;
        snprintf(stamp, sizeof stamp, "%10.3f ", ms);
    }
    int n = with_colour ? snprintf(line, size, "%s%s[%s]\033[0m %s: %s\n", stamp, colours[rank],
                                   names[rank], name, msg)
                        : snprintf(line, size, "%s[%s] %s: %s\n", stamp, names[rank], name, msg);
    if (n < 0) return 0;
    if ((size_t)n >= size) line[size - 2] = '\n'; /* cut: still one line */
    return (size_t)n < size ? (size_t)n : size - 1;
}

/* Write one line at rank (0..4). */
static void emit(int rank, const char *who, const char *fmt, va_list ap)
{
    if (rank > current_rank) return;
    char msg[4096], name[256], line[4600];
    size_t len = format_line(line, sizeof line, msg, name, rank, who, fmt, ap);
    fwrite(line, 1, len, sink ? sink : stderr);
    static const int levels[] = {ECS_LOG_ERROR, ECS_LOG_WARN, ECS_LOG_INFO, ECS_LOG_INFO,
                                 ECS_LOG_DEBUG};
    if (listener) listener(listener_ctx, levels[rank], name, msg);
}

void host_log_from_thread(ecs_log_level level, const char *who, const char *fmt, ...)
{
    int rank = rank_of(level);
    if (rank > current_rank) return;
    char msg[4096], name[256], line[4600];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, sizeof line, msg, name, rank, who, fmt, ap);
    va_end(ap);
    /* no stdio: the main thread may be stuck holding the stream's lock (stderr is
     * unbuffered, so what it wrote before is out already) */
    ssize_t ignored = write(fileno(sink ? sink : stderr), line, len);
    (void)ignored;
}

void host_logv(ecs_log_level level, const char *who, const char *fmt, va_list ap)
{
    unsigned l = (unsigned)level <= ECS_LOG_DEBUG ? (unsigned)level : ECS_LOG_DEBUG;
    emit(rank_of((ecs_log_level)l), who, fmt, ap);
}

void host_log(ecs_log_level level, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_logv(level, who, fmt, ap);
    va_end(ap);
}

void host_detail(const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(RANK_DETAIL, who, fmt, ap);
    va_end(ap);
}

void host_format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}
