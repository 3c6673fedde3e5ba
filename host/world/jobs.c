/* SPDX-License-Identifier: MIT */
/* jobs.c: the worker pool (jobs.h): a small pthread pool, fork-join, futex sleeps.
 *
 * The job in flight is one 64-bit word, `claim`: an epoch (24 bits), the next chunk to hand
 * out (20 bits) and the number of chunks (20 bits). The owner writes the job's description
 * (fn, ctx, count, grain), then stores a new word with release order; a thread takes a
 * chunk with one fetch_add on `next` and owns it when the value it got was below the count
 * (the acquire of that read makes the description visible). A thread that overshoots gets
 * nothing, at most once per thread and job, so `next` never reaches the epoch's bits. The
 * description is rewritten only after `done` reached the chunk count, so no thread holding
 * a chunk ever sees it change. Invariant: done <= chunks of the current epoch.
 *
 * Sleeping is a futex on `wake` (bumped once per job); the owner, waiting for the last
 * chunks, sleeps on `done`. Each side announces that it sleeps (`sleepers`, `owner_waits`)
 * before checking the word it sleeps on, sequentially consistent, so a wake is never
 * missed: either the waker sees the sleeper, or the sleeper sees the new value.
 */
#include "jobs.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define FIELD_BITS  20u
#define FIELD_MASK  ((1ull << FIELD_BITS) - 1u)
#define EPOCH_SHIFT (2u * FIELD_BITS)
#define NEXT_ONE    (1ull << FIELD_BITS)
#define SPIN_NS     2000u         /* a worker's wait for the next job before it sleeps */
#define ALT_STACK   (64u * 1024u) /* a worker's signal stack: a stack overflow is caught */

/* One thread's counters, on a cache line of its own (each written by its thread only). */
typedef struct worker {
    _Alignas(64) _Atomic(uint64_t) busy_ns;
    uint64_t span_t0, span_t1; /* this job: its first chunk's start, last chunk's end */
    uint32_t span_chunks;      /* chunks it ran in this job (reset by the owner) */
    struct host_jobs *pool;
    uint32_t index;
    pthread_t thread;
    void *alt_stack; /* its signal stack: held here too, so a process that ends without
                      * stopping the pool has it reachable (no leak reported) */
    bool started;
} worker;

struct host_jobs {
    _Alignas(64) _Atomic(uint64_t) claim; /* epoch | next | chunks */
    _Alignas(64) _Atomic(uint32_t) done;  /* chunks finished (or skipped) this epoch */
    _Atomic(uint32_t) owner_waits;        /* the owner sleeps on done */
    _Alignas(64) _Atomic(uint32_t) wake;  /* bumped per job and at stop */
    _Atomic(uint32_t) sleepers;           /* workers asleep (or about to be) on wake */
    _Atomic(bool) stop;
    _Atomic(bool) failed; /* a chunk of this job faulted: skip the rest */
    _Atomic(int) crash;   /* the first fault's signal since host_jobs_take_crash */
    /* the job: written by the owner while no chunk is held */
    host_job_fn fn;
    void *ctx;
    uint32_t count, grain;
    host_jobs_guard_fn guard;
    host_jobs_span_fn span_fn;
    void *span_ctx;
    uint32_t threads; /* owner + started workers */
    bool in_flight;   /* a job was published and not yet joined */
    bool abandoned;   /* one never was (the owner jumped out of it): inline from then on */
    bool spin;        /* every thread has a CPU: spin before sleeping */
    pthread_t owner;
    uint64_t start_ns; /* when the pool started: busy shares are of the time since */
    worker *workers;   /* [0] is the owner's counters; threads entries */
};

static _Thread_local uint32_t my_thread; /* 0: the owner (or not a pool thread) */
static _Thread_local bool my_in_job, my_is_worker;

/* ---- small helpers ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wait(_Atomic(uint32_t) *word, uint32_t seen)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic(uint32_t) *word, int n)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

uint32_t host_jobs_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? (uint32_t)n : 1;
}

bool host_jobs_in_job(void)
{
    return my_in_job;
}

bool host_jobs_is_worker(void)
{
    return my_is_worker;
}

/* ---- running chunks ---- */

typedef struct chunk_run {
    host_jobs *j;
    uint32_t chunk, thread;
} chunk_run;

static void run_chunk(void *arg)
{
    const chunk_run *c = arg;
    const host_jobs *j = c->j;
    uint32_t begin = c->chunk * j->grain;
    uint32_t end = j->count - begin < j->grain ? j->count : begin + j->grain;
    j->fn(j->ctx, begin, end, c->thread);
}

/* Take chunks of the current job until none is left; each one counted done after. */
static void work(host_jobs *j, uint32_t thread)
{
    worker *me = &j->workers[thread];
    for (;;) {
        uint64_t w = atomic_fetch_add_explicit(&j->claim, NEXT_ONE, memory_order_acq_rel);
        uint32_t next = (uint32_t)((w >> FIELD_BITS) & FIELD_MASK),
                 chunks = (uint32_t)(w & FIELD_MASK);
        if (next >= chunks) return;
        if (!atomic_load_explicit(&j->failed, memory_order_relaxed)) {
            chunk_run c = {j, next, thread};
            uint64_t t0 = now_ns();
            my_in_job = true;
            int sig = j->guard ? j->guard(run_chunk, &c) : (run_chunk(&c), 0);
            my_in_job = false;
            uint64_t t1 = now_ns();
            atomic_fetch_add_explicit(&me->busy_ns, t1 - t0, memory_order_relaxed);
            if (me->span_chunks++ == 0) me->span_t0 = t0;
            me->span_t1 = t1;
            if (sig) {
                int none = 0;
                atomic_compare_exchange_strong(&j->crash, &none, sig);
                atomic_store_explicit(&j->failed, true, memory_order_relaxed);
            }
        }
        if (atomic_fetch_add(&j->done, 1) + 1 == chunks && atomic_load(&j->owner_waits))
            futex_wake(&j->done, 1); /* the last chunk: the owner may sleep on it */
    }
}

/* Wait for the next job (spin a little, then sleep): the new value of wake. */
static uint32_t wait_for_job(host_jobs *j, uint32_t seen)
{
    uint32_t now = atomic_load_explicit(&j->wake, memory_order_acquire);
    if (now == seen && j->spin) {
        uint64_t until = now_ns() + SPIN_NS;
        for (int i = 1; now == seen; i++) {
            cpu_relax();
            now = atomic_load_explicit(&j->wake, memory_order_acquire);
            if (i % 64 == 0 && now_ns() > until) break;
        }
    }
    while (now == seen) {
        atomic_fetch_add(&j->sleepers, 1);
        if (atomic_load(&j->wake) == seen) futex_wait(&j->wake, seen);
        atomic_fetch_sub(&j->sleepers, 1);
        now = atomic_load(&j->wake);
    }
    return now;
}

/* Faults are delivered on the worker that made them (so the guard can catch them there);
 * returns the signal stack installed for them (NULL: none);
 * every other signal stays with the main thread. */
static void *worker_signals(void)
{
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) sigaddset(&set, faults[i]);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    stack_t ss = {.ss_sp = malloc(ALT_STACK), .ss_size = ALT_STACK, .ss_flags = 0};
    if (ss.ss_sp && sigaltstack(&ss, NULL) != 0) {
        free(ss.ss_sp);
        return NULL;
    }
    return ss.ss_sp;
}

static void worker_stack_free(void)
{
    stack_t old, off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    if (sigaltstack(&off, &old) == 0 && old.ss_sp && !(old.ss_flags & SS_DISABLE)) free(old.ss_sp);
}

static void *worker_main(void *arg)
{
    worker *me = arg;
    host_jobs *j = me->pool;
    my_thread = me->index;
    my_is_worker = true;
    me->alt_stack = worker_signals();
    uint32_t seen = 0; /* wake starts at 0: the first job bumps it */
    for (;;) {
        seen = wait_for_job(j, seen);
        if (atomic_load(&j->stop)) break;
        work(j, me->index);
    }
    worker_stack_free();
    me->alt_stack = NULL;
    return NULL;
}

/* ---- the pool ---- */

/* Start worker i with every signal blocked (worker_signals opens the faults), named. */
static bool worker_start(host_jobs *j, uint32_t i)
{
    worker *w = &j->workers[i];
    w->pool = j;
    w->index = i;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!w->started) return false;
    char name[16];
    host_format(name, sizeof name, "ecs-job-%u", i);
    pthread_setname_np(w->thread, name); /* a label only: not checked */
    return true;
}

host_jobs *host_jobs_start(uint32_t threads)
{
    if (threads == 0) threads = host_jobs_cpus();
    if (threads > HOST_JOBS_MAX_THREADS) threads = HOST_JOBS_MAX_THREADS;
    host_jobs *j = calloc(1, sizeof *j);
    worker *workers = aligned_alloc(64, sizeof(worker) * threads);
    if (!j || !workers) {
        free(j);
        free(workers);
        return NULL;
    }
    memset(workers, 0, sizeof(worker) * threads);
    j->workers = workers;
    j->owner = pthread_self();
    j->start_ns = now_ns();
    j->spin = threads <= host_jobs_cpus();
    j->threads = 1;
    for (uint32_t i = 1; i < threads && worker_start(j, i); i++) j->threads++;
    if (j->threads < threads)
        host_warn("jobs", "started %u of %u worker threads: running with those", j->threads - 1,
                  threads - 1);
    return j;
}

void host_jobs_stop(host_jobs *j)
{
    if (!j) return;
    atomic_store(&j->stop, true);
    atomic_fetch_add(&j->wake, 1);
    futex_wake(&j->wake, INT_MAX);
    for (uint32_t i = 1; i < j->threads; i++) pthread_join(j->workers[i].thread, NULL);
    free(j->workers);
    free(j);
}

uint32_t host_jobs_threads(const host_jobs *j)
{
    return j ? j->threads : 1;
}

void host_jobs_set_spans(host_jobs *j, host_jobs_span_fn fn, void *ctx)
{
    if (j) j->span_fn = fn, j->span_ctx = ctx;
}

/* Hand the job's spans to span_fn and reset them. */
static void report_spans(host_jobs *j)
{
    for (uint32_t i = 0; i < j->threads; i++) {
        worker *w = &j->workers[i];
        if (w->span_chunks && j->span_fn)
            j->span_fn(j->span_ctx, i, w->span_t0, w->span_t1, w->span_chunks);
        w->span_chunks = 0;
    }
}

void host_jobs_set_guard(host_jobs *j, host_jobs_guard_fn guard)
{
    if (j) j->guard = guard;
}

/* Wait until every chunk of a job of `chunks` is done: spin while it is short, then sleep. */
static void join(host_jobs *j, uint32_t chunks)
{
    for (int i = 0; i < 2000 && atomic_load_explicit(&j->done, memory_order_acquire) < chunks; i++)
        cpu_relax();
    for (;;) {
        uint32_t done = atomic_load(&j->done);
        if (done >= chunks) break;
        atomic_store(&j->owner_waits, 1);
        if (atomic_load(&j->done) == done) futex_wait(&j->done, done);
        atomic_store(&j->owner_waits, 0);
    }
}

/* Run one chunk [0, count) on this thread, through the guard when it is the top level. */
static ecs_status run_inline(host_jobs *j, uint32_t count, host_job_fn fn, void *ctx)
{
    if (my_in_job || !j || !j->guard) {
        fn(ctx, 0, count, my_thread);
        return ECS_OK;
    }
    j->fn = fn, j->ctx = ctx, j->count = count, j->grain = count;
    chunk_run c = {j, 0, 0};
    my_in_job = true;
    int sig = j->guard(run_chunk, &c);
    my_in_job = false;
    if (!sig) return ECS_OK;
    int none = 0;
    atomic_compare_exchange_strong(&j->crash, &none, sig);
    return ECS_ERR_PLUGIN;
}

ecs_status host_jobs_for(host_jobs *j, uint32_t count, uint32_t grain, host_job_fn fn, void *ctx)
{
    if (!fn) return ECS_ERR_INVALID_ARGUMENT;
    if (j && !my_in_job && !pthread_equal(pthread_self(), j->owner)) return ECS_ERR_WRONG_TIME;
    if (count == 0) return ECS_OK;
    uint32_t threads = host_jobs_threads(j);
    if (grain == 0) grain = count / (threads * 4u) + 1u;
    if (count / grain >= HOST_JOBS_MAX_CHUNKS) /* the chunk count must fit its field */
        grain = count / HOST_JOBS_MAX_CHUNKS + 1u;
    uint32_t chunks = count / grain + (count % grain != 0);
    if (j && j->in_flight && !my_in_job && !j->abandoned) { /* see host_jobs.h: abandoned */
        j->abandoned = true;
        host_warn("jobs", "a job was abandoned while its chunks ran (the second SIGINT or "
                          "SIGTERM under --safe): jobs run on the main thread from now on");
    }
    if (threads == 1 || chunks == 1 || my_in_job || j->abandoned)
        return run_inline(j, count, fn, ctx);
    j->fn = fn, j->ctx = ctx, j->count = count, j->grain = grain;
    j->in_flight = true;
    atomic_store_explicit(&j->failed, false, memory_order_relaxed);
    atomic_store_explicit(&j->done, 0, memory_order_relaxed);
    uint64_t epoch = (atomic_load_explicit(&j->claim, memory_order_relaxed) >> EPOCH_SHIFT) + 1u;
    atomic_store_explicit(&j->claim, (epoch << EPOCH_SHIFT) | chunks, memory_order_release);
    atomic_fetch_add(&j->wake, 1);
    uint32_t sleeping = atomic_load(&j->sleepers);
    if (sleeping) futex_wake(&j->wake, (int)(sleeping < chunks - 1 ? sleeping : chunks - 1));
    work(j, 0);
    join(j, chunks);
    j->in_flight = false;
    report_spans(j);
    return atomic_load_explicit(&j->failed, memory_order_relaxed) ? ECS_ERR_PLUGIN : ECS_OK;
}

typedef struct task_list {
    const host_task *tasks;
} task_list;

static void run_tasks(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    const task_list *l = ctx;
    for (uint32_t i = begin; i < end; i++) l->tasks[i].fn(l->tasks[i].ctx, thread);
}

ecs_status host_jobs_tasks(host_jobs *j, const host_task *tasks, uint32_t n)
{
    if (n && !tasks) return ECS_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < n; i++)
        if (!tasks[i].fn) return ECS_ERR_INVALID_ARGUMENT;
    task_list l = {tasks};
    return host_jobs_for(j, n, 1, run_tasks, &l);
}

int host_jobs_take_crash(host_jobs *j)
{
    return j ? atomic_exchange(&j->crash, 0) : 0;
}

uint32_t host_jobs_busy(const host_jobs *j, uint64_t *busy, uint32_t max)
{
    uint32_t n = 0;
    for (; j && busy && n < max && n < j->threads; n++)
        busy[n] = atomic_load_explicit(&j->workers[n].busy_ns, memory_order_relaxed);
    return n;
}

void host_jobs_print_stats(const host_jobs *j, FILE *out)
{
    uint64_t busy[HOST_JOBS_MAX_THREADS];
    uint32_t n = host_jobs_busy(j, busy, HOST_JOBS_MAX_THREADS);
    double wall = j ? (double)(now_ns() - j->start_ns) : 0;
    fprintf(out, "jobs: %u thread%s; busy in jobs since start:", host_jobs_threads(j),
            host_jobs_threads(j) == 1 ? "" : "s");
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s %s%.0u %.2f%%", i ? "," : "", i ? "ecs-job-" : "main", i,
                wall > 0 ? 100.0 * (double)busy[i] / wall : 0.0);
    fputs(n ? "\n" : " none (no pool)\n", out);
}
