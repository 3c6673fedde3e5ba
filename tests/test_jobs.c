/* SPDX-License-Identifier: MIT */
/* test_jobs.c: the worker pool (host/world/jobs.c) alone: every item of a parallel_for run
 * exactly once whatever the count, grain and thread count (1, 2, 4 and 64 threads on a
 * machine with fewer CPUs); results equal to one thread's; nested calls run inline; tasks;
 * a call from a foreign thread refused; workers named ecs-job-N and asleep when idle; a
 * fault in a chunk under --safe caught on the thread that ran it (a worker too), the call
 * failing and the pool working on (forked children). Also built with ThreadSanitizer by
 * .ci/run. One case alone: CMOCKA_TEST_FILTER=name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "harness.h"
#include "jobs.h"

#if defined(__SANITIZE_THREAD__) /* GCC's -fsanitize=thread; clang's below */
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* ---- every item once ---- */

typedef struct marks {
    _Atomic(uint32_t) *hits; /* per item */
    _Atomic(uint32_t) calls, bad_thread;
    uint32_t threads;
} marks;

static void mark(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    marks *m = ctx;
    atomic_fetch_add(&m->calls, 1);
    if (thread >= m->threads || begin >= end) atomic_fetch_add(&m->bad_thread, 1);
    for (uint32_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&m->hits[i], 1, memory_order_relaxed);
}

/* Run mark over count items with grain on j; fail naming the input unless each ran once. */
static void check_once(host_jobs *j, uint32_t count, uint32_t grain)
{
    marks m = {calloc(count ? count : 1, sizeof *m.hits), 0, 0, host_jobs_threads(j)};
    assert_non_null(m.hits);
    assert_int_equal(host_jobs_for(j, count, grain, mark, &m), ECS_OK);
    for (uint32_t i = 0; i < count; i++)
        if (atomic_load(&m.hits[i]) != 1)
            fail_msg("count %u grain %u threads %u: item %u ran %u times", count, grain, m.threads,
                     i, atomic_load(&m.hits[i]));
    assert_int_equal(atomic_load(&m.bad_thread), 0);
    if (count == 0) assert_int_equal(atomic_load(&m.calls), 0);
    free(m.hits);
}

static void sweep(uint32_t threads)
{
    host_jobs *j = host_jobs_start(threads);
    assert_non_null(j);
    assert_int_equal(host_jobs_threads(j), threads);
    static const uint32_t counts[] = {0, 1, 2, 7, 64, 1000, 65537, 1000003};
    static const uint32_t grains[] = {0, 1, 3, 64, 1000, 1u << 30};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
            check_once(j, counts[c], grains[g]);
    for (int r = 0; r < 2000; r++) check_once(j, 16, 1); /* back to back: spinning and waking */
    host_jobs_stop(j);
}

static void Jobs_every_item_once_one_thread(void **state)
{
    (void)state;
    sweep(1);
}

static void Jobs_every_item_once_two_threads(void **state)
{
    (void)state;
    sweep(2);
}

static void Jobs_every_item_once_four_threads(void **state)
{
    (void)state;
    sweep(4);
}

/* 64 threads on a 2-CPU machine: far more threads than CPUs, no spinning, still each once. */
static void Jobs_every_item_once_64_threads(void **state)
{
    (void)state;
    sweep(64);
}

/* --threads 1: no worker, one inline call on the calling thread. */
static void Jobs_one_thread_runs_inline(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(1);
    marks m = {calloc(100, sizeof *m.hits), 0, 0, 1};
    assert_int_equal(host_jobs_for(j, 100, 1, mark, &m), ECS_OK);
    assert_int_equal(atomic_load(&m.calls), 1);
    assert_int_equal(atomic_load(&m.hits[99]), 1);
    free(m.hits);
    host_jobs_stop(j);
}

/* ---- results equal to one thread's ---- */

static void square_root_sum(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    double *out = ctx;
    for (uint32_t i = begin; i < end; i++) {
        double x = (double)i * 0.001, s = 0;
        for (int k = 1; k < 8; k++) s += x / k;
        out[i] = s;
    }
}

static void Jobs_results_equal_one_thread(void **state)
{
    (void)state;
    enum { N = 300000 };
    double *one = malloc(N * sizeof *one), *two = malloc(N * sizeof *two);
    host_jobs *a = host_jobs_start(1), *b = host_jobs_start(2);
    assert_int_equal(host_jobs_for(a, N, 0, square_root_sum, one), ECS_OK);
    assert_int_equal(host_jobs_for(b, N, 97, square_root_sum, two), ECS_OK);
    assert_memory_equal(one, two, N * sizeof *one);
    host_jobs_stop(a);
    host_jobs_stop(b);
    free(one);
    free(two);
}

/* ---- nested calls ---- */

typedef struct nest {
    host_jobs *j;
    _Atomic(uint32_t) inner_items, bad_status;
} nest;

static void inner(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    nest *n = ctx;
    atomic_fetch_add(&n->inner_items, end - begin);
}

static void outer(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    nest *n = ctx;
    for (uint32_t i = begin; i < end; i++)
        if (host_jobs_for(n->j, 50, 1, inner, n) != ECS_OK) atomic_fetch_add(&n->bad_status, 1);
}

static void Jobs_nested_parallel_for_runs_inline(void **state)
{
    (void)state;
    nest n = {host_jobs_start(2), 0, 0};
    assert_int_equal(host_jobs_for(n.j, 40, 1, outer, &n), ECS_OK);
    assert_int_equal(atomic_load(&n.inner_items), 40 * 50);
    assert_int_equal(atomic_load(&n.bad_status), 0);
    host_jobs_stop(n.j);
}

/* ---- tasks ---- */

static void task_add(void *ctx, uint32_t thread)
{
    (void)thread;
    atomic_fetch_add((_Atomic(uint32_t) *)ctx, 1);
}

static void Jobs_tasks_each_run_once(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(2);
    _Atomic(uint32_t) hits[5] = {0};
    host_task tasks[5];
    for (int i = 0; i < 5; i++) tasks[i] = (host_task){task_add, &hits[i]};
    assert_int_equal(host_jobs_tasks(j, tasks, 5), ECS_OK);
    for (int i = 0; i < 5; i++) assert_int_equal(atomic_load(&hits[i]), 1);
    tasks[3].fn = NULL; /* refused whole: none runs */
    assert_int_equal(host_jobs_tasks(j, tasks, 5), ECS_ERR_INVALID_ARGUMENT);
    assert_int_equal(atomic_load(&hits[0]), 1);
    assert_int_equal(host_jobs_for(j, 5, 1, NULL, NULL), ECS_ERR_INVALID_ARGUMENT);
    host_jobs_stop(j);
}

/* ---- a foreign thread ---- */

static void *foreign(void *arg)
{
    marks m = {calloc(10, sizeof *m.hits), 0, 0, 2};
    ecs_status s = host_jobs_for(arg, 10, 1, mark, &m);
    free(m.hits);
    return (void *)(intptr_t)s;
}

static void Jobs_call_from_foreign_thread_is_refused(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(2);
    pthread_t t;
    void *got = NULL;
    assert_int_equal(pthread_create(&t, NULL, foreign, j), 0);
    assert_int_equal(pthread_join(t, &got), 0);
    assert_int_equal((intptr_t)got, ECS_ERR_WRONG_TIME);
    host_jobs_stop(j);
}

/* ---- workers: named, asleep when idle ---- */

/* The state letter and name of every thread of this process but the calling one. */
static int other_threads(char states[], char names[][16], int max)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    char self[32];
    snprintf(self, sizeof self, "%d", (int)gettid());
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, self) == 0) continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        if (!open || !close || close[1] != ' ') continue;
        size_t nl = (size_t)(close - open - 1) < 15 ? (size_t)(close - open - 1) : 15;
        memcpy(names[n], open + 1, nl);
        names[n][nl] = '\0';
        states[n++] = close[2];
    }
    closedir(d);
    return n;
}

static void Jobs_workers_are_named_and_sleep_when_idle(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(3);
    for (int r = 0; r < 100; r++) check_once(j, 1000, 10);
    char states[16], names[16][16];
    int sleeping = 0, named = 0;
    for (int tries = 0; tries < 500 && sleeping < 2; tries++) { /* a deadline, not a timing */
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        int n = other_threads(states, names, 16);
        sleeping = named = 0;
        for (int i = 0; i < n; i++) {
            if (strncmp(names[i], "ecs-job-", 8) != 0) continue;
            named += strcmp(names[i], "ecs-job-1") == 0 || strcmp(names[i], "ecs-job-2") == 0;
            sleeping += states[i] == 'S';
        }
    }
    assert_int_equal(named, 2);
    assert_int_equal(sleeping, 2);
    host_jobs_stop(j);
    /* stopped: joined, and gone. A joined thread can still be listed in /proc for a moment
     * (the kernel clears the id join waits for before it removes the task), so look again
     * until it is gone, with a deadline. */
    int left = 1;
    for (int tries = 0; tries < 500 && left; tries++) {
        int n = other_threads(states, names, 16);
        left = 0;
        for (int i = 0; i < n; i++) left += strncmp(names[i], "ecs-job-", 8) == 0;
        if (left) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    assert_int_equal(left, 0);
}

static void Jobs_busy_time_is_counted_per_thread(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(2);
    double *out = malloc(400000 * sizeof *out);
    uint64_t busy[4] = {0};
    assert_int_equal(host_jobs_for(j, 400000, 1000, square_root_sum, out), ECS_OK);
    assert_int_equal(host_jobs_busy(j, busy, 4), 2);
    assert_true(busy[0] + busy[1] > 0);
    free(out);
    host_jobs_stop(j);
}

/* ---- faults under --safe ---- */

/* Not under ThreadSanitizer: its runtime takes over the fault handlers and the guard's jump
 * out of one never lands (test_guard's cases fail there the same way), so the TSan build
 * of this file in .ci/run checks the pool's threads and the normal and ASan builds check
 * the faults. */
#if !defined(UNDER_TSAN)

static _Atomic(int) worker_faulted;

/* An unmapped address the compiler cannot see through (not NULL: UBSan would stop at it). */
static int *volatile nowhere = (int *)(uintptr_t)16;

static void fault(void)
{
    *nowhere = 1; /* a real fault, as a plugin's bug makes one */
}

/* Two chunks: the one a worker runs faults; the caller's waits for that to happen. */
static void fault_on_worker(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)ctx, (void)begin, (void)end;
    if (thread != 0) {
        atomic_store(&worker_faulted, 1);
        fault();
    }
    for (int i = 0; i < 10000 && !atomic_load(&worker_faulted); i++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL); /* a deadline: 10 s */
}

static _Atomic(int) caller_faulted;

/* Two chunks: the one the caller runs faults; a worker's waits for that to happen. */
static void fault_on_caller(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)ctx, (void)begin, (void)end;
    if (thread == 0) {
        atomic_store(&caller_faulted, 1);
        fault();
    }
    for (int i = 0; i < 10000 && !atomic_load(&caller_faulted); i++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL); /* a deadline: 10 s */
}

static void fault_always(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)ctx, (void)begin, (void)end, (void)thread;
    fault();
}

static void faults_caught(void)
{
    if (!host_guard_install()) _exit(10);
    host_jobs *j = host_jobs_start(2);
    if (host_jobs_threads(j) != 2) _exit(11);
    host_jobs_set_guard(j, host_guard_catch);
    if (host_jobs_for(j, 2, 1, fault_on_worker, NULL) != ECS_ERR_PLUGIN) _exit(12);
    if (host_jobs_take_crash(j) != SIGSEGV) _exit(13);
    if (host_jobs_take_crash(j) != 0) _exit(14);                                 /* reported once */
    if (host_jobs_for(j, 1, 1, fault_always, NULL) != ECS_ERR_PLUGIN) _exit(15); /* inline */
    if (host_jobs_take_crash(j) != SIGSEGV) _exit(16);
    if (host_jobs_for(j, 2, 1, fault_on_caller, NULL) != ECS_ERR_PLUGIN) _exit(17);
    if (host_jobs_take_crash(j) != SIGSEGV) _exit(18);
    if (host_jobs_for(j, 1000, 1, fault_always, NULL) != ECS_ERR_PLUGIN) _exit(21);
    if (host_jobs_take_crash(j) != SIGSEGV) _exit(22);
    marks m = {calloc(5000, sizeof *m.hits), 0, 0, 2}; /* and the pool works on */
    if (host_jobs_for(j, 5000, 7, mark, &m) != ECS_OK) _exit(19);
    for (int i = 0; i < 5000; i++)
        if (atomic_load(&m.hits[i]) != 1) _exit(20);
    free(m.hits);
    host_jobs_stop(j);
}

static void Jobs_fault_in_a_chunk_is_caught_on_its_thread(void **state)
{
    (void)state;
    int status = harness_in_child(faults_caught);
    if (!WIFEXITED(status))
        fail_msg("the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Without --safe a fault on a worker ends the process, as the signal says. */
static void fault_unguarded(void)
{
    host_guard_report_install();
    host_jobs *j = host_jobs_start(2);
    host_jobs_set_guard(j, host_guard_catch);
    host_jobs_for(j, 2, 1, fault_on_worker, NULL);
    _exit(3);
}

/* ---- a job the owner leaves by a jump ---- */

static sigjmp_buf out_of_join;
static _Atomic(int) worker_hangs, release_worker, owner_left;

/* Two chunks: a worker's hangs until released; the owner's waits until that one started. */
static void hang_on_worker(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)ctx, (void)begin, (void)end;
    if (thread != 0) atomic_store(&worker_hangs, 1); /* the owner's waits for it (10 s) */
    for (int i = 0; i < 10000 && !atomic_load(thread ? &release_worker : &worker_hangs); i++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL); /* a deadline: 10 s */
}

/* SIGUSR1 on the owner: leave the job as the guard's abandon does, from the owner's wait
 * (not from inside a chunk: then it lets the sender try again). */
static void leave_job(int sig)
{
    (void)sig;
    if (!host_jobs_in_job()) siglongjmp(out_of_join, 1);
}

static void *send_leave(void *owner)
{
    for (int i = 0; i < 10000 && !atomic_load(&owner_left); i++) {
        if (atomic_load(&worker_hangs)) pthread_kill(*(pthread_t *)owner, SIGUSR1);
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return NULL;
}

/* The owner jumps out of a job while a worker still runs a chunk of it (the second SIGINT
 * under --safe abandons a hung plugin call so): the next jobs run inline and right, and
 * the pool stops cleanly once the worker is let go. */
static void Jobs_a_job_left_by_a_jump_makes_the_pool_run_inline(void **state)
{
    (void)state;
    host_jobs *j = host_jobs_start(2);
    struct sigaction sa = {.sa_handler = leave_job}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    pthread_t self = pthread_self(), sender;
    assert_int_equal(pthread_create(&sender, NULL, send_leave, &self), 0);
    if (sigsetjmp(out_of_join, 1) == 0) {
        host_jobs_for(j, 2, 1, hang_on_worker, NULL);
        fail_msg("the job ended without the worker's chunk");
    }
    atomic_store(&owner_left, 1);
    pthread_join(sender, NULL);
    sigaction(SIGUSR1, &old, NULL);
    marks m = {calloc(1000, sizeof *m.hits), 0, 0, 2};
    assert_int_equal(host_jobs_for(j, 1000, 10, mark, &m), ECS_OK);
    assert_int_equal(atomic_load(&m.calls), 1); /* inline: one call */
    for (int i = 0; i < 1000; i++) assert_int_equal(atomic_load(&m.hits[i]), 1);
    free(m.hits);
    atomic_store(&release_worker, 1);
    host_jobs_stop(j);
}

static void Jobs_fault_without_safe_ends_the_process(void **state)
{
    (void)state;
    int status = harness_in_child(fault_unguarded);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Jobs_every_item_once_one_thread),
        cmocka_unit_test(Jobs_every_item_once_two_threads),
        cmocka_unit_test(Jobs_every_item_once_four_threads),
        cmocka_unit_test(Jobs_every_item_once_64_threads),
        cmocka_unit_test(Jobs_one_thread_runs_inline),
        cmocka_unit_test(Jobs_results_equal_one_thread),
        cmocka_unit_test(Jobs_nested_parallel_for_runs_inline),
        cmocka_unit_test(Jobs_tasks_each_run_once),
        cmocka_unit_test(Jobs_call_from_foreign_thread_is_refused),
        cmocka_unit_test(Jobs_workers_are_named_and_sleep_when_idle),
        cmocka_unit_test(Jobs_busy_time_is_counted_per_thread),
#if !defined(UNDER_TSAN)
        cmocka_unit_test(Jobs_fault_in_a_chunk_is_caught_on_its_thread),
        cmocka_unit_test(Jobs_fault_without_safe_ends_the_process),
        cmocka_unit_test(Jobs_a_job_left_by_a_jump_makes_the_pool_run_inline),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
