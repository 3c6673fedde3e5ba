/* SPDX-License-Identifier: MIT */
/* schedule.c: the ordered list of managers and systems, the manager of each bit
 * (schedule.h). A stable sort of a few dozen entries at registration time, never during a
 * frame. */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "world.h"

ecs_status host_schedule_reserve(host_world *w, size_t entries)
{
    if (entries > w->sched.step_cap) {
        size_t cap = entries * 2;
        host_step *v = malloc(cap * sizeof *v); /* the frame may be reading the old one */
        if (!v) return ECS_ERR_NO_MEMORY;
        if (w->sched.step_count) memcpy(v, w->sched.steps, w->sched.step_count * sizeof *v);
        free(w->sched.steps);
        w->sched.steps = v;
        w->sched.step_cap = cap;
    }
    size_t bits = w->sig.name_count;
    if (bits > w->sched.by_bit_cap) {
        host_manager **v = realloc(w->sched.by_bit, bits * 2 * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        memset(v + w->sched.by_bit_cap, 0, (bits * 2 - w->sched.by_bit_cap) * sizeof *v);
        w->sched.by_bit = v;
        w->sched.by_bit_cap = bits * 2;
    }
    return ECS_OK;
}

void host_system_step(void *state, const ecs_frame_info *frame)
{
    host_system *s = state;
    const host_world *w = s->world;
    const host_collection *c = host_collections_get(&w->collections, s->collection);
    s->desc.run(s->desc.state, c ? c->dense : NULL, c ? c->count : 0, frame);
}

static int32_t weight_of(const host_step *st)
{
    return st->s ? st->s->desc.weight : 0;
}

static uint64_t seq_of(const host_step *st)
{
    return st->s ? st->s->seq : st->m->seq;
}

/* Sort v[0..n) by weight (higher first), then seq; equal keys keep their order (insertion
 * sort: stable, and n is small). */
static void sort_steps(host_step *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        host_step x = v[i];
        size_t j = i;
        while (j > 0 &&
               (weight_of(&v[j - 1]) < weight_of(&x) ||
                (weight_of(&v[j - 1]) == weight_of(&x) && seq_of(&v[j - 1]) > seq_of(&x)))) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* The entries into out, managers first (registration order), then systems: unsorted. */
static size_t gather(const host_world *w, host_step *out, bool all)
{
    size_t n = 0;
    for (size_t i = 0; i < w->manager_count; i++) {
        host_manager *m = w->managers[i];
        if (all || m->desc.update)
            out[n++] =
                (host_step){m->desc.update, m->desc.state, &m->timing, m, NULL, &m->update_call};
    }
    for (size_t i = 0; i < w->system_count; i++) {
        host_system *s = w->systems[i];
        out[n++] = (host_step){host_system_step, s, &s->timing, NULL, s, &s->call};
    }
    return n;
}

size_t host_schedule_all(const host_world *w, host_step *out)
{
    size_t n = gather(w, out, true);
    sort_steps(out, n);
    return n;
}

void host_world_managers_changed(host_world *w)
{
    w->sched.step_count = gather(w, w->sched.steps, false);
    sort_steps(w->sched.steps, w->sched.step_count);
    w->sched.step_managers = w->manager_count;
    w->sched.stale = false;
    if (w->sched.by_bit_cap)
        memset(w->sched.by_bit, 0, w->sched.by_bit_cap * sizeof *w->sched.by_bit);
    for (size_t i = 0; i < w->manager_count; i++) {
        host_manager *m = w->managers[i];
        if (m->bit < w->sched.by_bit_cap) w->sched.by_bit[m->bit] = m;
    }
}

bool host_schedule_ensure(host_world *w)
{
    if (!w->sched.stale && w->sched.step_managers == w->manager_count) return true;
    if (host_schedule_reserve(w, w->manager_count + w->system_count) != ECS_OK) {
        host_error("world", "out of memory ordering %zu managers and %zu systems: frame skipped",
                   w->manager_count, w->system_count);
        w->sched.step_count = 0;
        return false;
    }
    host_world_managers_changed(w);
    return true;
}
