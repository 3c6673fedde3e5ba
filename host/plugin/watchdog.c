/* SPDX-License-Identifier: MIT */
/* watchdog.c: stop signals and the thread that tells a stuck plugin call from a busy host
 * (watchdog.h).
 *
 * The thread wakes every 100 ms (or at once when a signal posts its semaphore) and reads
 * guard.h's current call and its sequence number. The same number with a call running
 * for a second or more means stuck: it then publishes that number in `stuck` (the handler
 * compares it with the current one, so a call that returned meanwhile is never taken for
 * stuck) and the line a handler writes if it ends the host. Only the handler, on the main
 * thread, ever jumps (abandons); the thread ends the host only without --safe. */
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "guard.h"
#include "log.h"
#include "thread.h"

#define PERIOD_NS  100000000ull  /* how often the thread looks */
#define STUCK_NS   1000000000ull /* a call this long is stuck */
#define RUNNING_NS 200000000ull  /* a call this long is named at the first signal */

enum { EVENT_FIRST = 1, EVENT_LATER = 2 };

static volatile sig_atomic_t *stop_flag;
static volatile sig_atomic_t stops, pending; /* signals so far; a later one not acted on */
static bool safe_mode, watching;
static pthread_t main_thread, thread;
static sem_t wake;
static _Atomic int event, quit;
static _Atomic uint64_t stuck; /* the sequence number of the stuck call, 0: none */
static char stuck_line[600];   /* written before `stuck` is published */
static _Atomic size_t stuck_len;

/* The words of the current call, asked of the main thread, which owns its strings (the
 * call may return and its record go at any time: only that thread reads them). */
#define NAME_SIGNAL SIGURG /* ignored by default: one sent before the handler is harmless */
static char named[400];
static _Atomic uint64_t named_seq;
static sem_t named_ready;

static void on_name(int sig)
{
    (void)sig;
    int saved = errno;
    uint64_t seq = atomic_load(&host_call_seq);
    host_guard_describe(named, sizeof named);
    atomic_store(&named_seq, seq); /* after the words */
    sem_post(&named_ready);
    errno = saved;
}

/* "plugin 'x' has been running update of 'm' for 1.2 s" into buf, when call seq still
 * runs (ns: how long). False when it returned meanwhile or the main thread did not answer
 * within half a second. */
static bool describe(char *buf, size_t size, uint64_t seq, uint64_t ns)
{
    if (atomic_load(&named_seq) != seq) {
        while (sem_trywait(&named_ready) == 0) {
        }
        pthread_kill(main_thread, NAME_SIGNAL);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += 500000000L;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        while (sem_clockwait(&named_ready, CLOCK_MONOTONIC, &t) != 0 && errno == EINTR) {
        }
    }
    if (atomic_load(&named_seq) != seq || atomic_load(&host_call_seq) != seq) return false;
    snprintf(buf, size, "%s for %.1f s", named, (double)ns / 1e9);
    return true;
}

/* From the handler: is the call running now the one found stuck? */
static bool stuck_now(void)
{
    uint64_t s = atomic_load(&stuck);
    return s && s == atomic_load(&host_call_seq) && atomic_load(&host_call_now);
}

/* End the host now, unsaved (a stuck call and no --safe), with the stuck line. */
static void end_now(int sig)
{
    static const char head[] = "[error] ecs-host: second ";
    static const char middle[] = ": ending now without saving: ";
    static const char tail[] = " (--safe would abandon it and save)\n";
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    size_t len = atomic_load(&stuck_len);
    ssize_t ignored = write(STDERR_FILENO, head, sizeof head - 1);
    ignored = write(STDERR_FILENO, name, strlen(name));
    ignored = write(STDERR_FILENO, middle, sizeof middle - (len ? 1 : 3));
    ignored = write(STDERR_FILENO, stuck_line, len);
    ignored = write(STDERR_FILENO, tail, sizeof tail - 1);
    (void)ignored;
    _exit(128 + sig);
}

static void on_stop(int sig)
{
    if (!host_guard_on_main_thread()) { /* a plugin's thread: the main thread decides */
        pthread_kill(main_thread, sig);
        return;
    }
    *stop_flag = 1;
    if (++stops == 1) {
        atomic_store(&event, EVENT_FIRST);
        if (watching) sem_post(&wake);
        return;
    }
    if (!watching || stuck_now()) { /* without the thread nothing tells: as if stuck */
        if (safe_mode && host_guard_abandon(sig)) return; /* never returns */
        end_now(sig);
    }
    pending = sig;
    atomic_store(&event, EVENT_LATER);
    sem_post(&wake);
}

/* One look: the current call, how long it has run, what to say and do. */
static void look(uint64_t *seen, uint64_t *since, bool *warned)
{
    uint64_t seq = atomic_load(&host_call_seq), t = host_clock_mono_ns();
    bool running = atomic_load(&host_call_now) != NULL;
    if (seq != *seen || !running) {
        *seen = seq;
        *since = t;
        *warned = false;
        atomic_store(&stuck, 0);
    }
    uint64_t ns = t - *since;
    int ev = atomic_exchange(&event, 0);
    char what[460];
    bool named_now = running && (ev || ns >= STUCK_NS) && ns >= RUNNING_NS &&
                     describe(what, sizeof what, seq, ns);
    const char *second = safe_mode ? "abandons it and the world is saved"
                                   : "ends the host without saving (--safe would abandon it)";
    if (ev == EVENT_FIRST && named_now)
        host_log_from_thread(ECS_LOG_WARN, "ecs-host", "stopping: %s; a second signal %s", what,
                             second);
    if (ns < STUCK_NS || !named_now) {
        if (ev == EVENT_LATER && named_now)
            host_log_from_thread(ECS_LOG_WARN, "ecs-host",
                                 "another signal: %s; if it runs past a second, it %s", what,
                                 safe_mode ? "is abandoned and the world saved"
                                           : "ends the host without saving");
        else if (ev == EVENT_LATER)
            host_log_from_thread(ECS_LOG_INFO, "ecs-host",
                                 "another signal: no plugin call is stuck, nothing to abandon: "
                                 "the host stops as asked");
        return;
    }
    size_t len = strlen(what) < sizeof stuck_line ? strlen(what) : sizeof stuck_line - 1;
    memcpy(stuck_line, what, len);
    atomic_store(&stuck_len, len);
    atomic_store(&stuck, seq); /* after the line: the handler may write it */
    if (!*warned)
        host_log_from_thread(ECS_LOG_WARN, "ecs-host", "%s; a second SIGINT or SIGTERM %s", what,
                             second);
    *warned = true;
    int sig = pending;
    if (!sig) return;
    pending = 0;
    if (safe_mode)
        pthread_kill(main_thread, sig); /* the handler abandons it, on the main thread */
    else
        end_now(sig);
}

static void *watch(void *arg)
{
    (void)arg;
    uint64_t seen = 0, since = host_clock_mono_ns();
    bool warned = false;
    while (!atomic_load(&quit)) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t at = (uint64_t)t.tv_nsec + PERIOD_NS;
        t.tv_sec += (time_t)(at / 1000000000ull);
        t.tv_nsec = (long)(at % 1000000000ull);
        while (sem_clockwait(&wake, CLOCK_MONOTONIC, &t) != 0 && errno == EINTR) {
        }
        if (!atomic_load(&quit)) look(&seen, &since, &warned);
    }
    return NULL;
}

bool host_watchdog_start(volatile sig_atomic_t *stop, bool safe)
{
    stop_flag = stop;
    safe_mode = safe;
    main_thread = pthread_self();
    struct sigaction name;
    memset(&name, 0, sizeof name);
    name.sa_handler = on_name;
    name.sa_flags = SA_RESTART; /* a plugin blocked in a read goes on reading */
    sigemptyset(&name.sa_mask);
    watching = sem_init(&wake, 0, 0) == 0 && sem_init(&named_ready, 0, 0) == 0 &&
               sigaction(NAME_SIGNAL, &name, NULL) == 0 &&
               host_thread_start(&thread, watch, NULL, "ecs-watchdog");
    if (!watching)
        host_warn("ecs-host", "cannot start the watchdog thread: a second SIGINT or SIGTERM ends "
                              "the host at once");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return watching;
}

void host_watchdog_end(void)
{
    if (!watching) return;
    atomic_store(&quit, 1);
    sem_post(&wake);
    pthread_join(thread, NULL);
    watching = false;
    sem_destroy(&wake);
    sem_destroy(&named_ready);
}
