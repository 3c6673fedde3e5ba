/* SPDX-License-Identifier: MIT */
/* session.c: a running ecs-host's record (session.h): made with its world and scene store,
 * the world's hooks pointed at the plugin layer, freed in the reverse order. */
#include "session.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "guard.h"
#include "hostapi.h"
#include "jobs.h"
#include "loader.h"
#include "plugin.h"
#include "private.h"
#include "reload.h"

/* The world's hooks (world.h): owners are plugin records. */
static void crashed_hook(void *ctx, void *owner, int sig, const char *what)
{
    (void)ctx;
    host_plugin_crashed(owner, sig, what);
}

static bool owner_crashed_hook(const void *owner)
{
    return ((const host_plugin *)owner)->crashed;
}

static const char *owner_name_hook(const void *owner)
{
    return ((const host_plugin *)owner)->name;
}

static void forget_hook(void *ctx, const ecs_entity *list, uint32_t n)
{
    host_scene_forget(((host_session *)ctx)->scene, list, n);
}

static void drop_crashed_hook(void *ctx)
{
    host_reload_drop_crashed(ctx);
}

static void trace_hook(void *ctx, const char *name, const char *cat, uint64_t t0, uint64_t t1)
{
    host_trace_slice(&((host_session *)ctx)->trace, name, cat, t0, t1);
}

/* A job thread's part of a job (jobs.h): a slice on its track, named after the plugin call
 * that started the job (the manager or system, else the plugin). */
static void job_span_hook(void *ctx, uint32_t thread, uint64_t t0, uint64_t t1, uint32_t chunks)
{
    const host_call *c = atomic_load(&host_call_now);
    const char *name = c ? (c->of ? c->of : c->plugin) : NULL;
    host_trace_job(&((host_session *)ctx)->trace, name, thread, t0, t1, chunks);
}

/* The scene store's state holders (scene.h): plugins that keep a state of their own. */
static void *state_holder(void *ctx, size_t i)
{
    host_session *s = ctx;
    for (size_t k = 0; k < s->plugin_count; k++) {
        host_plugin *p = s->plugins[k];
        if (p->status != HOST_PLUGIN_LOADED || !p->has_pstate || p->crashed) continue;
        if (i-- == 0) return p;
    }
    return NULL;
}

static void *state_named(void *ctx, const char *name)
{
    host_plugin *p = host_plugin_named(ctx, name);
    return p && p->has_pstate && !p->crashed ? p : NULL;
}

static const char *state_name(const void *holder)
{
    return ((const host_plugin *)holder)->name;
}

static char *state_text(void *holder, size_t *len, char *why, size_t whylen)
{
    return host_plugin_state_text(holder, len, why, whylen);
}

static ecs_status state_read(void *holder, const char *text, size_t len, size_t at, size_t *err_at,
                             int *sig, char *why, size_t whylen)
{
    host_plugin *p = holder;
    return host_plugin_state_read(p, &p->pstate, text, len, at, err_at, sig, why, whylen);
}

host_session *host_session_new(void)
{
    static atomic_flag claimed = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&claimed)) host_on_main_thread = true;
    host_session *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->private_fd = -1;
    if (!(s->world = host_world_new()) || !(s->scene = host_scene_store_new(s->world))) {
        host_world_free(s->world);
        free(s);
        return NULL;
    }
    s->world->hooks = (host_world_hooks){.ctx = s,
                                         .guard = host_guard_call,
                                         .crashed = crashed_hook,
                                         .owner_crashed = owner_crashed_hook,
                                         .owner_name = owner_name_hook,
                                         .forget = forget_hook,
                                         .drop_crashed = drop_crashed_hook};
    host_scene_set_states(s->scene, &(host_scene_states){s, state_holder, state_named, state_name,
                                                         state_text, state_read});
    return s;
}

void host_session_free(host_session *s)
{
    if (!s) return;
    host_unload_all(s);
    host_session_trace_close(s);
    for (size_t i = 0; i < s->plugin_count; i++) host_plugin_free(s->plugins[i]);
    free(s->plugins);
    host_private_remove(s); /* the private copies are gone with the plugins: the folder */
    host_registry_free(&s->registry);
    host_scene_store_free(s->scene);
    host_world_free(s->world);
    free(s);
}

void host_session_frame(host_session *s)
{
    host_world_frame(s->world);
    host_api_report_thread_calls(s);
}

ecs_status host_session_trace_open(host_session *s, const char *path)
{
    ecs_status st = host_trace_open(&s->trace, path);
    s->world->hooks.trace = st == ECS_OK ? trace_hook : NULL;
    if (st == ECS_OK) host_trace_threads(&s->trace, host_jobs_threads(s->world->jobs));
    host_jobs_set_spans(s->world->jobs, st == ECS_OK ? job_span_hook : NULL, s);
    return st;
}

void host_session_trace_close(host_session *s)
{
    host_jobs_set_spans(s->world->jobs, NULL, NULL);
    host_trace_close(&s->trace);
    s->world->hooks.trace = NULL;
}
