/* world.c: the world's life and its frame: update managers in order, announce the
 * destroyed entities in batches, recycle their indices, record timings (world.h). */
#include "world.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guard.h"
#include "log.h"
#include "reload.h"
#include "scene.h"
#include "debug_name_api.h" /* the host names entities through it when loaded */

uint64_t host_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

host_world *host_world_new(void)
{
    host_world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (!(w->entities = host_entities_new()) || !(w->scene = host_scene_store_new())) {
        host_entities_free(w->entities);
        free(w);
        return NULL;
    }
    w->time_managers = true;
    return w;
}

void host_world_free(host_world *w)
{
    if (!w) return;
    host_world_unload_all(w);
    host_world_trace_close(w);
    for (size_t i = 0; i < w->plugin_count; i++) host_plugin_free(w->plugins[i]);
    free(w->plugins);
    host_reloader_cleanup(w); /* the private copies are gone with the plugins: the folder */
    free(w->managers);
    free(w->destroyed);
    host_registry_free(&w->registry);
    host_scene_store_free(w->scene);
    host_entities_free(w->entities);
    free(w);
}

static void trace_slice(host_world *w, const char *name, const char *cat, uint64_t t0, uint64_t t1)
{
    fprintf(w->trace,
            "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
            "\"ts\":%.3f,\"dur\":%.3f}",
            w->trace_first ? "" : ",", name, cat, (double)(t0 - w->trace_origin_ns) / 1e3,
            (double)(t1 - t0) / 1e3);
    w->trace_first = false;
}

ecs_status host_world_trace_open(host_world *w, const char *path)
{
    host_world_trace_close(w);
    if (!(w->trace = fopen(path, "w"))) return ECS_ERR_IO;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", w->trace);
    w->trace_first = true;
    w->trace_origin_ns = host_now_ns();
    return ECS_OK;
}

void host_world_trace_close(host_world *w)
{
    if (!w->trace) return;
    fputs("\n]}\n", w->trace);
    if (fclose(w->trace) != 0) host_error("trace", "could not finish the trace file");
    w->trace = NULL;
}

typedef struct destroyed_call {
    host_manager *m;
    const ecs_entity *list;
    uint32_t n;
} destroyed_call;

static void call_destroyed(void *arg)
{
    destroyed_call *c = arg;
    c->m->desc.entities_destroyed(c->m->desc.state, c->list, c->n);
}

void host_world_announce_destroyed(host_world *w)
{
    uint32_t n;
    while ((n = host_entities_unannounced(w->entities)) > 0) { /* a round per cascade */
        if (n > w->destroyed_cap) {
            ecs_entity *buf = realloc(w->destroyed, n * sizeof *buf);
            if (!buf) { /* keep them unannounced: the next frame tries again */
                host_error("world", "out of memory announcing %u destroyed entities", n);
                return;
            }
            w->destroyed = buf;
            w->destroyed_cap = n;
        }
        n = host_entities_take_destroyed(w->entities, w->destroyed, n);
        host_scene_forget(w->scene, w->destroyed, n); /* their scene ids and kept JSON */
        for (size_t i = 0; i < w->manager_count; i++) {
            host_manager *m = w->managers[i];
            if (!m->desc.entities_destroyed || m->owner->crashed) continue;
            destroyed_call c = {m, w->destroyed, n};
            int sig = w->safe ? host_guard_run(call_destroyed, &c) : (call_destroyed(&c), 0);
            if (sig) host_plugin_crashed(w, m->owner, sig, m->name);
        }
    }
    host_entities_recycle(w->entities);
}

typedef struct update_call {
    host_manager *m;
    const ecs_frame_info *frame;
} update_call;

static void call_update(void *arg)
{
    update_call *c = arg;
    c->m->desc.update(c->m->desc.state, c->frame);
}

/* Run m's update: directly, or under the crash guard with --safe. */
static inline void run_update(host_world *w, host_manager *m)
{
    if (!w->safe) {
        m->desc.update(m->desc.state, &w->frame);
        return;
    }
    if (m->owner->crashed) return;
    update_call c = {m, &w->frame};
    int sig = host_guard_run(call_update, &c);
    if (sig) host_plugin_crashed(w, m->owner, sig, m->name);
}

/* Update every manager in order: nothing but the calls. */
static void update_untimed(host_world *w)
{
    for (size_t i = 0; i < w->manager_count; i++) {
        host_manager *m = w->managers[i];
        if (m->desc.update) run_update(w, m);
    }
}

/* Update every manager in order, timing each (one clock read per manager); returns the
 * time the last one ended. */
static uint64_t update_timed(host_world *w, uint64_t t0)
{
    for (size_t i = 0; i < w->manager_count; i++) {
        host_manager *m = w->managers[i];
        if (!m->desc.update) continue;
        run_update(w, m);
        uint64_t t1 = host_now_ns();
        host_timing_record(&m->timing, t1 - t0);
        if (w->trace) trace_slice(w, m->name, "update", t0, t1);
        t0 = t1;
    }
    return t0;
}

void host_world_frame(host_world *w)
{
    uint64_t start = host_now_ns();
    if (w->frame.frame == 0 && w->last_frame_ns == 0)
        w->start_ns = start;
    else
        w->frame.dt = (double)(start - w->last_frame_ns) / 1e9;
    w->frame.time = (double)(start - w->start_ns) / 1e9;
    w->last_frame_ns = start;

    bool timed = w->time_managers || w->trace;
    uint64_t t0 = timed ? update_timed(w, start) : (update_untimed(w), start);
    host_world_announce_destroyed(w);
    if (w->safe) host_world_drop_crashed(w);
    uint64_t end = host_now_ns(); /* the frame's own time, timed or not */
    if (w->trace) trace_slice(w, "destroyed", "announce", t0, end);
    host_timing_record(&w->frame_timing, end - start);
    w->frame.frame++;
}

const char *host_world_entity_text(const host_world *w, ecs_entity e, char *buf, size_t size)
{
    const ecs_debug_name_api *names =
        host_registry_find(&w->registry, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, NULL);
    if (names && names->format) return names->format(names->self, e, buf, size);
    snprintf(buf, size, "#%u.%u", ecs_entity_index(e), ecs_entity_generation(e));
    return buf;
}

void host_world_print_stats(const host_world *w, FILE *out)
{
    double frame_total = (double)w->frame_timing.total_ns;
    fprintf(out, "%-20s %-16s %10s %10s %10s %10s %7s\n", "manager", "plugin", "components",
            "mean us", "p99 us", "max us", "share");
    for (size_t i = 0; i < w->manager_count; i++) {
        const host_manager *m = w->managers[i];
        const host_timing *t = &m->timing;
        uint32_t count = m->desc.count ? m->desc.count(m->desc.state) : 0;
        fprintf(out, "%-20s %-16s %10u %10.2f %10.2f %10.2f %6.1f%%\n", m->name, m->owner->name,
                count, host_timing_mean(t) / 1e3, (double)host_timing_quantile(t, 0.99) / 1e3,
                (double)t->max_ns / 1e3,
                frame_total > 0 ? 100.0 * (double)t->total_ns / frame_total : 0.0);
    }
    const host_timing *f = &w->frame_timing;
    fprintf(out, "frames: %llu, frame mean %.2f us, p99 %.2f us, max %.2f us; entities alive: %u\n",
            (unsigned long long)f->count, host_timing_mean(f) / 1e3,
            (double)host_timing_quantile(f, 0.99) / 1e3, (double)f->max_ns / 1e3,
            host_entities_live(w->entities));
}
