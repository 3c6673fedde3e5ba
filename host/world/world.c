/* SPDX-License-Identifier: MIT */
/* world.c: the world's life and its frame: bring collections up to date, run the ordered
 * list of manager updates and systems, announce the destroyed entities in batches (their
 * signatures cleared), recycle their indices, record timings (world.h). Owner code runs
 * through the hooks of the layer above. */
#include "world.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "jobs.h"
#include "log.h"

_Atomic(const host_call *) host_call_now;
_Atomic(uint64_t) host_call_seq;

uint64_t host_now_ns(void)
{
    return host_clock_mono_ns();
}

host_world *host_world_new(void)
{
    host_world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    if (!(w->entities = host_entities_new())) {
        free(w);
        return NULL;
    }
    w->sig.keys = host_entities_alive_keys(w->entities); /* who holds an index: signature.h */
    w->timing.time_managers = true;
    w->timing.time_every = HOST_TIME_EVERY;
    host_clock_init(); /* the per-step timing's clock */
    return w;
}

void host_world_free(host_world *w)
{
    if (!w) return;
    host_jobs_stop(w->jobs); /* the layer above unloaded the plugins and closed its trace */
    free(w->managers);
    free(w->systems); /* each system went with its plugin */
    free(w->sched.steps);
    free(w->sched.by_bit);
    host_collections_free(&w->collections);
    host_sig_free(&w->sig);
    host_view_plans_free(&w->views);
    free(w->destroyed);
    host_entities_free(w->entities);
    free(w);
}

int host_world_guard(host_world *w, const host_call *c, void (*fn)(void *), void *arg)
{
    if (w->hooks.guard) return w->hooks.guard(c, fn, arg);
    if (!c) return fn(arg), 0; /* named by an outer call */
    const host_call *was = host_call_enter(c);
    fn(arg);
    host_call_leave(was);
    return 0;
}

void host_world_crashed(host_world *w, void *owner, int sig, const char *what)
{
    if (w->hooks.crashed) w->hooks.crashed(w->hooks.ctx, owner, sig, what);
}

bool host_world_owner_crashed(const host_world *w, const void *owner)
{
    return w->hooks.owner_crashed && w->hooks.owner_crashed(owner);
}

const char *host_world_owner_name(const host_world *w, const void *owner)
{
    const char *name = w->hooks.owner_name ? w->hooks.owner_name(owner) : NULL;
    return name ? name : "?";
}

static inline void trace_slice(host_world *w, const char *name, const char *cat, uint64_t t0,
                               uint64_t t1)
{
    w->hooks.trace(w->hooks.ctx, name, cat, t0, t1);
}

void host_world_trace_slice(host_world *w, const char *name, const char *cat, uint64_t t0,
                            uint64_t t1)
{
    if (!w->hooks.trace) return;
    char safe[160]; /* a file name may hold anything: keep the JSON whole */
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < sizeof safe; c++)
        safe[n++] = (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) ? '_' : *c;
    safe[n] = '\0';
    trace_slice(w, safe, cat, t0, t1 > t0 ? t1 : t0);
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
        if (w->hooks.forget) /* their scene ids and kept JSON */
            w->hooks.forget(w->hooks.ctx, w->destroyed, n);
        host_sig_forget(&w->sig, w->destroyed, n); /* every bit: managers need not */
        for (size_t i = 0; i < w->manager_count; i++) {
            host_manager *m = w->managers[i];
            if (!m->desc.entities_destroyed || host_world_owner_crashed(w, m->owner)) continue;
            destroyed_call c = {m, w->destroyed, n};
            int sig = host_world_guard(w, &m->destroyed_call, call_destroyed, &c);
            if (sig) host_world_crashed(w, m->owner, sig, m->name);
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
    if (host_world_owner_crashed(w, m->owner)) return;
    update_call c = {m, &w->frame};
    int sig = host_world_guard(w, &m->update_call, call_update, &c);
    if (sig) host_world_crashed(w, m->owner, sig, m->name);
}

typedef struct system_call {
    host_system *s;
    const ecs_entity *list;
    uint32_t n;
    const ecs_frame_info *frame;
} system_call;

static void call_system(void *arg)
{
    system_call *c = arg;
    c->s->desc.run(c->s->desc.state, c->list, c->n, c->frame);
}

/* Run system s over its collection (as of the frame's start): directly, or under the
 * crash guard with --safe. */
static inline void run_system(host_world *w, host_system *s)
{
    const host_collection *col = host_collections_get(&w->collections, s->collection);
    const ecs_entity *list = col ? col->dense : NULL;
    uint32_t n = col ? col->count : 0;
    if (!w->safe) {
        s->desc.run(s->desc.state, list, n, &w->frame);
        return;
    }
    if (host_world_owner_crashed(w, s->owner)) return;
    system_call c = {s, list, n, &w->frame};
    int sig = host_world_guard(w, &s->call, call_system, &c);
    if (sig) host_world_crashed(w, s->owner, sig, s->name);
}

static inline void run_step(host_world *w, const host_step *st)
{
    if (st->m)
        run_update(w, st->m);
    else
        run_system(w, st->s);
}

/* Run the ordered list: nothing but the calls. The list does not change during a frame,
 * so its bounds stay in registers across the plugins' calls. */
static void steps_untimed(host_world *w)
{
    const host_step *st = w->sched.steps, *end = st + w->sched.step_count;
    if (w->safe) {
        for (; st < end; st++) run_step(w, st);
        return;
    }
    const ecs_frame_info *frame = &w->frame;
    const host_call *was = host_call_enter(NULL);
    for (; st < end; st++) { /* a system's update: host_system_step */
        host_call_enter(st->call);
        st->update(st->state, frame);
    }
    host_call_leave(was);
}

/* Run the ordered list, timing each step (one read of the cheap clock each, clock.h).
 * The readings of up to 64 steps are kept, then recorded together: nothing but the calls
 * and the clock between two readings. start_ns: when the first step starts
 * (CLOCK_MONOTONIC); returns when the last one ended (start_ns plus the steps' times). */
static uint64_t steps_timed(host_world *w, uint64_t start_ns)
{
    enum { CHUNK = 64 };
    const ecs_frame_info *frame = &w->frame;
    bool safe = w->safe, trace = w->hooks.trace != NULL; /* neither changes during a frame */
    uint64_t ticks[CHUNK + 1], ns0 = start_ns;
    const host_call *was = host_call_enter(NULL);
    ticks[0] = host_clock_ticks();
    for (size_t first = 0; first < w->sched.step_count; first += CHUNK) {
        const host_step *st = w->sched.steps + first;
        size_t n = w->sched.step_count - first < CHUNK ? w->sched.step_count - first : CHUNK;
        for (size_t k = 0; k < n; k++) {
            if (safe)
                run_step(w, &st[k]);
            else
                host_call_enter(st[k].call), st[k].update(st[k].state, frame);
            ticks[k + 1] = host_clock_ticks();
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t ns = host_clock_ns(ticks[k], ticks[k + 1]);
            host_timing_record(st[k].timing, ns);
            if (trace)
                trace_slice(w, st[k].m ? st[k].m->name : st[k].s->name,
                            st[k].m ? "update" : "system", ns0, ns0 + ns);
            ns0 += ns;
        }
        ticks[0] = ticks[n]; /* the next chunk's first step starts here */
    }
    host_call_leave(was);
    return ns0;
}

void host_world_frame(host_world *w)
{
    uint64_t start = host_now_ns(), ticks = host_clock_ticks(); /* dt and time; the duration */
    if (w->frame.frame == 0 && w->timing.last_frame_ns == 0)
        w->timing.start_ns = start;
    else
        w->frame.dt = (double)(start - w->timing.last_frame_ns) / 1e9;
    w->frame.time = (double)(start - w->timing.start_ns) / 1e9;
    w->timing.last_frame_ns = start;
    if (w->fixed_dt > 0) /* --fixed-dt: the same run every time, whatever the clock says */
        w->frame.dt = w->fixed_dt, w->frame.time = (double)w->frame.frame * w->fixed_dt;
    if (w->time_scale > 0) w->frame.dt *= w->time_scale; /* slow motion, fast forward */
    w->frame.seed = host_frame_seed(w->seed, w->frame.frame);

    bool traced = w->hooks.trace != NULL;
    bool timed =
        traced || (w->timing.time_managers &&
                   (w->timing.time_every <= 1 || w->frame.frame % w->timing.time_every == 0));
    uint64_t t0 = start;
    if (w->collections.active && host_collections_apply(&w->collections, &w->sig, w->entities) &&
        timed) {
        t0 = start + host_clock_ns(ticks, host_clock_ticks()); /* not charged to the first step */
        if (traced) trace_slice(w, "collections", "apply", start, t0);
    }
    if (w->sched.stale || w->sched.step_managers != w->manager_count) host_schedule_ensure(w);
    t0 = timed ? steps_timed(w, t0) : (steps_untimed(w), t0);
    host_world_announce_destroyed(w);
    if (w->safe && w->hooks.drop_crashed) w->hooks.drop_crashed(w->hooks.ctx);
    uint64_t end = start + host_clock_ns(ticks, host_clock_ticks()); /* timed or not */
    if (traced) trace_slice(w, "destroyed", "announce", t0, end > t0 ? end : t0);
    host_timing_record(&w->timing.frame_timing, end - start);
    if (timed) w->timing.timed_frames++, w->timing.timed_frames_ns += end - start;
    w->frame.frame++;
}

typedef struct count_call {
    const host_manager *m;
    uint32_t n;
} count_call;

static void call_count(void *arg)
{
    count_call *c = arg;
    c->n = c->m->desc.count(c->m->desc.state);
}

int host_manager_count_guarded(host_world *w, const host_manager *m, uint32_t *n)
{
    count_call c = {m, 0};
    host_call named = {host_world_owner_name(w, m->owner), "count()", m->name};
    int sig = m->desc.count ? host_world_guard(w, &named, call_count, &c) : 0;
    *n = sig ? 0 : c.n;
    return sig;
}

uint32_t host_manager_count(host_world *w, const host_manager *m)
{
    uint32_t n = 0;
    if (host_world_owner_crashed(w, m->owner)) return 0;
    int sig = host_manager_count_guarded(w, m, &n);
    if (sig) host_world_crashed(w, m->owner, sig, "count()");
    return n;
}

/* One --stats row: a manager (count: its components) or a system (count: the entities of
 * its collection). */
static void print_row(host_world *w, FILE *out, const host_step *st)
{
    double frame_total = (double)w->timing.timed_frames_ns; /* the frames the steps were timed in */
    const host_manager *m = st->m;
    const host_system *s = st->s;
    const host_timing *t = m ? &m->timing : &s->timing;
    const host_collection *c = s ? host_collections_get(&w->collections, s->collection) : NULL;
    char count[16] = "-"; /* a manager without count() says nothing about its size */
    if (!m || m->desc.count)
        snprintf(count, sizeof count, "%u", m ? host_manager_count(w, m) : (c ? c->count : 0));
    fprintf(out, "%-20s %-16s %10s %10.2f %10.2f %10.2f %6.1f%%  %s\n", m ? m->name : s->name,
            host_world_owner_name(w, m ? m->owner : s->owner), count, host_timing_mean(t) / 1e3,
            (double)host_timing_quantile(t, 0.99) / 1e3, (double)t->max_ns / 1e3,
            frame_total > 0 ? 100.0 * (double)t->total_ns / frame_total : 0.0,
            m ? "manager" : "system");
}

void host_world_print_stats(host_world *w, FILE *out)
{
    fprintf(out, "%-20s %-16s %10s %10s %10s %10s %7s  %s\n", "manager", "plugin", "components",
            "mean us", "p99 us", "max us", "share", "kind");
    host_step *rows = malloc((w->manager_count + w->system_count + 1) * sizeof *rows);
    size_t n = rows ? host_schedule_all(w, rows) : 0; /* run order */
    for (size_t i = 0; i < n; i++) print_row(w, out, &rows[i]);
    for (size_t i = 0; !rows && i < w->manager_count; i++) /* no memory: managers, in order */
        print_row(w, out, &(host_step){NULL, NULL, NULL, w->managers[i], NULL, NULL});
    free(rows);
    const host_timing *f = &w->timing.frame_timing;
    fprintf(out, "frames: %llu, frame mean %.2f us, p99 %.2f us, max %.2f us; entities alive: %u\n",
            (unsigned long long)f->count, host_timing_mean(f) / 1e3,
            (double)host_timing_quantile(f, 0.99) / 1e3, (double)f->max_ns / 1e3,
            host_entities_live(w->entities));
    fprintf(out, "updates timed on %llu of the %llu frames (--timing-every %u)\n",
            (unsigned long long)w->timing.timed_frames, (unsigned long long)f->count,
            w->hooks.trace ? 1u : w->timing.time_every);
}
