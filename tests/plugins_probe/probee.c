/* SPDX-License-Identifier: MIT */
/* probee.c: the test plugin of test_probe.c (and of ecs-bench's P1), built as many
 * variants from this one source with -D flags: a good one, and ones whose constructor,
 * entry function or update misbehaves the ways the child-process probe must catch.
 *
 * Plugin PB_NAME (default "pb") with one manager of the same name: one integer per
 * entity, scene value a JSON number; each update adds PB_STEP (default 1) to every value,
 * so a saved scene shows how many frames this plugin's code ran. At unload it logs
 * "pb PB_VERSION unload: U updates run, N components".
 *
 * Every constructor run appends one line to the file named by the environment variable
 * PB_RUNS (when set): "constructor PID pgid PGID stdin null|other fds 0,1,2 ignored
 * 13,... blocked 10,...", what the process it runs in was given (its process group, its
 * stdin, its open files, the signals it ignores and blocks; "-" for none). A test counts
 * the runs (the probe's and the host's) and reads what each had; the *_SECOND variants
 * misbehave only from the second run on, that is in the host after the probe passed.
 *
 * Build flags:
 *   PB_NAME="x", PB_VERSION="v", PB_STEP=n
 *   PB_CTOR_SEGV | PB_CTOR_ABORT | PB_CTOR_EXIT | PB_CTOR_HANG   the constructor raises
 *       SIGSEGV, calls abort(), calls exit(3), or loops forever
 *   PB_CTOR_GARBAGE   the constructor writes a line to file descriptor 3 (the probe's
 *                     report pipe in the probe; nothing open there in the host)
 *   PB_CTOR_WORD="w"  the constructor writes the line w to file descriptor 3: a word of
 *                     the probe's protocol out of its turn
 *   PB_ENTRY_SEGV | PB_ENTRY_HANG   the entry function raises SIGSEGV or loops forever
 *   PB_ENTRY_HANG_NOALARM   the entry function blocks SIGALRM (the probe's own last
 *                           resort), then loops forever: only the host can end it
 *   PB_CTOR_SEGV_SECOND | PB_ENTRY_SEGV_SECOND   SIGSEGV in the constructor / the entry
 *       function from the second constructor run on (needs PB_RUNS)
 *   PB_HANG_ON_TRIGGER   update loops forever once the file named by the environment
 *                        variable PB_TRIGGER exists (it logs "pb: looping forever" first)
 *   PB_LOAD_HANG_ON_TRIGGER   load() loops forever while that file exists ("pb: load
 *                        looping forever")
 *   PB_UPDATE_SEGV       update writes to address 16 (a wild store on the main thread)
 *   PB_THREAD_SEGV       update starts a thread of the plugin's own that writes to address
 *                        16, and waits for it (up to 10 s) while it crashes
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ecs_plugin.h"

#ifndef PB_NAME
#define PB_NAME "pb"
#endif
#ifndef PB_VERSION
#define PB_VERSION "1"
#endif
#ifndef PB_STEP
#define PB_STEP 1
#endif
#define WHO PB_NAME " " PB_VERSION

#define MAX_ITEMS 256 /* the tests' scenes are small: a fixed table keeps this short */

typedef struct pb_state {
    const ecs_host *host;
    uint32_t count;
    ecs_entity entity[MAX_ITEMS];
    int64_t value[MAX_ITEMS];
} pb_state;

static uint64_t updates_run;
static int runs; /* constructor runs before this one (from PB_RUNS), this one included */

/* Never returns; the counter keeps the loop from being optimized away. */
__attribute__((unused)) static void spin_forever(void)
{
    static volatile uint64_t spins;
    for (;;) spins++;
}

/* Append ",n" (the first without the comma) to list[*len..), as room allows. */
static void add_number(char *list, size_t size, size_t *len, int n)
{
    int put = snprintf(list + *len, size - *len, "%s%d", *len ? "," : "", n);
    if (put > 0 && (size_t)put < size - *len) *len += (size_t)put;
}

/* What this process was given, for the line of $PB_RUNS: its open files (before this
 * function opens any), the signals it ignores and blocks, whether stdin is /dev/null. */
static void given(char *fds, char *ignored, char *blocked, size_t size, const char **in)
{
    size_t nf = 0, ni = 0, nb = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            add_number(fds, size, &nf, atoi(e->d_name));
    if (d) closedir(d);
    sigset_t mask;
    sigprocmask(SIG_BLOCK, NULL, &mask);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
            add_number(ignored, size, &ni, sig);
        if (sigismember(&mask, sig) == 1) add_number(blocked, size, &nb, sig);
    }
    if (!nf) strcpy(fds, "-");
    if (!ni) strcpy(ignored, "-");
    if (!nb) strcpy(blocked, "-");
    struct stat st;
    *in =
        fstat(0, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) ? "null" : "other";
}

/* Append this run's line to $PB_RUNS; returns the number of lines it holds now. */
static int count_run(void)
{
    const char *path = getenv("PB_RUNS");
    if (!path) return 1;
    char fds[256] = "", ignored[256] = "", blocked[256] = "";
    const char *in = "";
    given(fds, ignored, blocked, sizeof fds, &in);
    FILE *f = fopen(path, "a+");
    if (!f) return 1;
    fprintf(f, "constructor %d pgid %d stdin %s fds %s ignored %s blocked %s\n", (int)getpid(),
            (int)getpgrp(), in, fds, ignored, blocked);
    fflush(f);
    rewind(f);
    int lines = 0, c;
    while ((c = fgetc(f)) != EOF) lines += c == '\n';
    fclose(f);
    return lines;
}

__attribute__((constructor)) static void pb_constructor(void)
{
    runs = count_run();
#if defined(PB_CTOR_SEGV)
    raise(SIGSEGV);
#elif defined(PB_CTOR_ABORT)
    abort();
#elif defined(PB_CTOR_EXIT)
    exit(3);
#elif defined(PB_CTOR_HANG)
    spin_forever();
#elif defined(PB_CTOR_GARBAGE)
    static const char junk[] = "hello from a constructor\n";
    if (write(3, junk, sizeof junk - 1) < 0) {
    }
#elif defined(PB_CTOR_SEGV_SECOND)
    if (runs >= 2) raise(SIGSEGV);
#elif defined(PB_CTOR_WORD)
    static const char word[] = PB_CTOR_WORD "\n";
    if (write(3, word, sizeof word - 1) < 0) {
    }
#endif
}

/* ---- the manager ---- */

static long find(const pb_state *s, ecs_entity e)
{
    for (uint32_t i = 0; i < s->count; i++)
        if (ecs_entity_eq(s->entity[i], e)) return (long)i;
    return -1;
}

/* A store to address 16: the fault a stray pointer gets (not UB a sanitizer stops first). */
__attribute__((unused)) static void wild_store(void)
{
    static volatile uintptr_t address = 16; /* read at run time: no compile-time bounds */
    *(volatile int *)address = 1;
}

#ifdef PB_THREAD_SEGV
#include <pthread.h>
#include <time.h>

static void *thread_segv(void *arg)
{
    (void)arg;
    wild_store();
    return NULL;
}
#endif

static void pb_update(void *state, const ecs_frame_info *frame)
{
#ifdef PB_UPDATE_SEGV
    wild_store();
#endif
#ifdef PB_THREAD_SEGV
    pthread_t t;
    if (pthread_create(&t, NULL, thread_segv, NULL) == 0) {
        pthread_detach(t);
        nanosleep(&(struct timespec){10, 0}, NULL); /* the crash ends the process first */
    }
#endif
    (void)frame;
    pb_state *s = state;
#ifdef PB_HANG_ON_TRIGGER
    const char *trigger = getenv("PB_TRIGGER");
    if (trigger && access(trigger, F_OK) == 0) {
        s->host->log(s->host, ECS_LOG_INFO, PB_NAME ": looping forever");
        spin_forever();
    }
#endif
    updates_run++;
    for (uint32_t i = 0; i < s->count; i++) s->value[i] += PB_STEP;
}

static void pb_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    pb_state *s = state;
    for (uint32_t k = 0; k < n; k++) {
        long i = find(s, list[k]);
        if (i < 0) continue;
        s->count--;
        s->entity[i] = s->entity[s->count];
        s->value[i] = s->value[s->count];
    }
}

static uint32_t pb_count(void *state)
{
    return ((pb_state *)state)->count;
}

static ecs_status pb_save(void *state, ecs_entity e, cJSON **out)
{
    pb_state *s = state;
    long i = find(s, e);
    *out = i < 0 ? NULL : cJSON_CreateNumber((double)s->value[i]);
    return i < 0 || *out ? ECS_OK : ECS_ERR_NO_MEMORY;
}

static ecs_status pb_load_component(void *state, ecs_entity e, const cJSON *json)
{
    pb_state *s = state;
    double v = cJSON_IsNumber(json) ? json->valuedouble : NAN;
    if (!(fabs(v) <= 9007199254740992.0) || v != floor(v)) {
        s->host->scene_error(s->host, json, "expected a whole number");
        return ECS_ERR_BAD_VALUE;
    }
    if (find(s, e) >= 0) return ECS_ERR_EXISTS;
    if (s->count == MAX_ITEMS) return ECS_ERR_NO_MEMORY;
    s->entity[s->count] = e;
    s->value[s->count++] = (int64_t)v;
    return ECS_OK;
}

/* ---- the plugin ---- */

static ecs_status pb_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    (void)args;
#ifdef PB_LOAD_HANG_ON_TRIGGER
    const char *trigger = getenv("PB_TRIGGER");
    if (trigger && access(trigger, F_OK) == 0) {
        h->log(h, ECS_LOG_INFO, PB_NAME ": load looping forever");
        spin_forever();
    }
#endif
    pb_state *s = h->alloc(h, sizeof *s);
    if (!s) return ECS_ERR_NO_MEMORY;
    memset(s, 0, sizeof *s);
    s->host = h;
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = PB_NAME,
                          .state = s,
                          .update = pb_update,
                          .entities_destroyed = pb_destroyed,
                          .count = pb_count,
                          .save_component = pb_save,
                          .load_component = pb_load_component};
    ecs_status st = h->register_manager(h, &m);
    if (st != ECS_OK) {
        h->free(h, s);
        return st;
    }
    h->log(h, ECS_LOG_INFO, WHO " load: constructor run %d", runs);
    *state = s;
    return ECS_OK;
}

static void pb_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)reason;
    pb_state *s = state;
    h->log(h, ECS_LOG_INFO, WHO " unload: %llu updates run, %u components",
           (unsigned long long)updates_run, s->count);
    h->free(h, s);
}

static const ecs_plugin_desc pb_plugin = {
    ECS_PLUGIN_DESC_HEADER, PB_NAME, PB_VERSION, 1, NULL, pb_load, pb_unload, ECS_STATE_NONE,
};

#if defined(PB_ENTRY_SEGV) || defined(PB_ENTRY_HANG) || defined(PB_ENTRY_SEGV_SECOND) ||           \
    defined(PB_ENTRY_HANG_NOALARM)
ECS_EXPORT const ecs_plugin_desc *ecs_plugin_entry(void);
ECS_EXPORT const ecs_plugin_desc *ecs_plugin_entry(void)
{
#if defined(PB_ENTRY_SEGV)
    raise(SIGSEGV);
#elif defined(PB_ENTRY_HANG)
    spin_forever();
#elif defined(PB_ENTRY_HANG_NOALARM)
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alarm, NULL);
    spin_forever();
#else
    if (runs >= 2) raise(SIGSEGV);
#endif
    return &pb_plugin;
}
#else
ECS_PLUGIN_EXPORT(pb_plugin)
#endif
