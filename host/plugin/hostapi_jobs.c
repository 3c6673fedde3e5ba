/* SPDX-License-Identifier: MIT */
/* hostapi_jobs.c: the jobs entries of the ecs_host table (parallel_for, run_tasks,
 * job_threads) over the world's worker pool (host/world/jobs.h), and the guard every chunk
 * runs through: the crash guard on its own thread (--safe), and the thread marked as being
 * in a job, so that only the calls tagged [job] pass (HOST_MAIN_THREAD_OR refuses the
 * others, also on the main thread while it runs a chunk). */
#include "guard.h"
#include "hostapi.h"
#include "jobs.h"
#include "plugin.h"
#include "session.h"

int host_api_job_guard(void (*fn)(void *), void *arg)
{
    bool was = host_on_main_thread;
    host_on_main_thread = false; /* in a job: host calls without [job] are refused */
    int sig = host_guard_catch(fn, arg);
    host_on_main_thread = was;
    return sig;
}

/* May this thread start jobs: the main thread, or a chunk of one (nested: inline)? Counts
 * and refuses a plugin thread's call. */
static bool jobs_allowed(const ecs_host *h, const char *call)
{
    if (host_on_main_thread || host_jobs_in_job()) return true;
    host_api_other_thread(h, call);
    return false;
}

static ecs_status parallel_for(const ecs_host *h, uint32_t count, uint32_t grain, ecs_job_fn fn,
                               void *ctx)
{
    if (!jobs_allowed(h, "parallel_for")) return ECS_ERR_WRONG_TIME;
    host_plugin *p = (host_plugin *)(uintptr_t)h;
    if (!fn && !host_jobs_in_job())
        return host_api_refuse(p, ECS_ERR_INVALID_ARGUMENT, "parallel_for", "fn is NULL");
    return host_jobs_for(p->session->world->jobs, count, grain, fn, ctx);
}

static ecs_status run_tasks(const ecs_host *h, const ecs_task *tasks, uint32_t n)
{
    if (!jobs_allowed(h, "run_tasks")) return ECS_ERR_WRONG_TIME;
    host_plugin *p = (host_plugin *)(uintptr_t)h;
    ecs_status s = host_jobs_tasks(p->session->world->jobs, tasks, n);
    if (s == ECS_ERR_INVALID_ARGUMENT && !host_jobs_in_job())
        host_api_refuse(p, s, "run_tasks", "tasks is NULL or a task's fn is NULL");
    return s;
}

static uint32_t job_threads(const ecs_host *h)
{
    return host_jobs_threads(((host_plugin *)(uintptr_t)h)->session->world->jobs);
}

void host_api_init_jobs(ecs_host *t)
{
    t->parallel_for = parallel_for;
    t->run_tasks = run_tasks;
    t->job_threads = job_threads;
}
