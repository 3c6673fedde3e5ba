/* SPDX-License-Identifier: MIT */
/* control.c: the session's frame controls (control.h). */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

void host_control_init(host_control *c, host_session *hs, int64_t from, int64_t to)
{
    *c = (host_control){.hs = hs, .time_scale = 1.0};
    host_loop_init(&c->loop, hs, from, to);
}

void host_control_free(host_control *c)
{
    for (size_t i = 0; i < c->kept_count; i++) host_snapshot_free(&c->kept[i].snap);
    free(c->kept);
    host_loop_free(&c->loop);
    c->kept = NULL, c->kept_count = c->kept_cap = 0;
}

void host_control_boundary(host_control *c)
{
    host_loop_boundary(&c->loop);
}

bool host_control_runs(host_control *c)
{
    if (!c->paused) return true;
    if (!c->steps) return false;
    c->steps--;
    return true;
}

void host_control_pause(host_control *c, bool paused)
{
    c->paused = paused;
    c->steps = 0;
    host_info("control", "%s at frame %llu", paused ? "paused" : "running",
              (unsigned long long)c->hs->world->frame.frame);
}

void host_control_step(host_control *c, uint64_t n)
{
    c->paused = true;
    c->steps += n;
}

bool host_control_set_scale(host_control *c, double scale, char *why, size_t len)
{
    if (!(scale > 0 && scale <= 100))
        return host_format(why, len, "a time scale is a number above 0, up to 100"), false;
    c->time_scale = c->hs->world->time_scale = scale;
    return true;
}

/* Is name a kept snapshot's name: [A-Za-z0-9_.-], 1 to 63 characters? */
static bool name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n >= HOST_CONTROL_NAME_MAX) return false;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static host_kept_snapshot *kept_named(host_control *c, const char *name)
{
    for (size_t i = 0; i < c->kept_count; i++)
        if (!strcmp(c->kept[i].name, name)) return &c->kept[i];
    return NULL;
}

ecs_status host_control_snapshot(host_control *c, const char *name, char *why, size_t len)
{
    if (!name_ok(name))
        return host_format(why, len, "a snapshot's name is 1-63 of A-Z a-z 0-9 _ . -"),
               ECS_ERR_INVALID_ARGUMENT;
    host_kept_snapshot *k = kept_named(c, name);
    if (!k && c->kept_count == c->kept_cap) {
        size_t cap = c->kept_cap ? c->kept_cap * 2 : 8;
        host_kept_snapshot *v = realloc(c->kept, cap * sizeof *v);
        if (!v) return host_format(why, len, "out of memory"), ECS_ERR_NO_MEMORY;
        c->kept = v, c->kept_cap = cap;
    }
    host_kept_snapshot fresh = {{0}, {NULL, 0, 0, 0}};
    host_kept_snapshot *into = k ? k : &fresh;
    ecs_status s = host_snapshot_take(c->hs, &into->snap, why, len);
    if (s != ECS_OK) {
        if (k) host_control_drop(c, name); /* its buffer is empty now */
        return s;
    }
    if (!k) {
        snprintf(fresh.name, sizeof fresh.name, "%s", name);
        c->kept[c->kept_count++] = fresh;
    }
    host_info("control", "snapshot '%s' of frame %llu kept (%zu bytes)", name,
              (unsigned long long)into->snap.frame, into->snap.size);
    return ECS_OK;
}

ecs_status host_control_restore(host_control *c, const char *name, bool *changed, char *why,
                                size_t len)
{
    host_kept_snapshot *k = kept_named(c, name);
    *changed = false;
    if (!k) return host_format(why, len, "no snapshot named '%s'", name), ECS_ERR_NOT_FOUND;
    host_control_loop_stop(c);
    ecs_status s = host_snapshot_restore_own(c->hs, &k->snap, changed, why, len);
    if (s == ECS_OK)
        host_info("control", "snapshot '%s' restored: frame %llu next", name,
                  (unsigned long long)c->hs->world->frame.frame);
    return s;
}

ecs_status host_control_drop(host_control *c, const char *name)
{
    host_kept_snapshot *k = kept_named(c, name);
    if (!k) return ECS_ERR_NOT_FOUND;
    host_snapshot_free(&k->snap);
    *k = c->kept[--c->kept_count];
    return ECS_OK;
}

ecs_status host_control_loop(host_control *c, const char *name, uint64_t frames, char *why,
                             size_t len)
{
    bool changed;
    if (frames == 0 || frames > (1ull << 40))
        return host_format(why, len, "a loop runs 1 frame or more"), ECS_ERR_INVALID_ARGUMENT;
    if (name) {
        ecs_status s = host_control_restore(c, name, &changed, why, len);
        if (s != ECS_OK) return s;
    }
    host_control_loop_stop(c);
    int64_t from = (int64_t)c->hs->world->frame.frame;
    host_loop_init(&c->loop, c->hs, from, from + (int64_t)frames);
    host_loop_boundary(&c->loop); /* its start, now */
    return c->loop.held
               ? ECS_OK
               : (host_format(why, len, "its snapshot failed (the log says why)"), ECS_ERR_PLUGIN);
}

void host_control_loop_stop(host_control *c)
{
    if (c->loop.from >= 0) host_info("control", "loop stopped");
    host_loop_free(&c->loop);
    c->loop.from = -1;
}

/* Kept snapshot k taken again with plugin p's parts as JSON; false with why. */
static bool kept_as_json(host_control *c, host_kept_snapshot *k, const host_plugin *p, char *why,
                         size_t len)
{
    bool changed;
    if (host_snapshot_restore_own(c->hs, &k->snap, &changed, why, len) != ECS_OK) return false;
    return host_snapshot_take_json(c->hs, &k->snap, p, why, len) == ECS_OK;
}

void host_control_before_swap(void *arg, const char *plugin)
{
    host_control *c = arg;
    char why[512];
    bool changed;
    host_loop_before_swap(&c->loop, plugin);
    const host_plugin *p = NULL;
    for (size_t i = 0; i < c->hs->plugin_count; i++)
        if (!strcmp(c->hs->plugins[i]->name, plugin)) p = c->hs->plugins[i];
    if (!c->kept_count || !p || !p->manager_count) return;
    host_snapshot now = {NULL, 0, 0, 0};
    if (host_snapshot_take(c->hs, &now, why, sizeof why) != ECS_OK) {
        host_warn("control",
                  "kept snapshots keep %s's parts as bytes (%s): one may be refused "
                  "if its new build lays them out anew",
                  plugin, why);
        return;
    }
    for (size_t i = 0; i < c->kept_count; i++)
        if (!kept_as_json(c, &c->kept[i], p, why, sizeof why))
            host_warn("control", "snapshot '%s' dropped: %s", c->kept[i].name, why),
                host_control_drop(c, c->kept[i--].name);
    if (host_snapshot_restore_own(c->hs, &now, &changed, why, sizeof why) != ECS_OK)
        host_error("control",
                   "the world could not come back after the kept snapshots were "
                   "converted: %s",
                   why);
    host_snapshot_free(&now);
}

size_t host_control_bytes(const host_control *c)
{
    size_t n = c->loop.snap.cap;
    for (size_t i = 0; i < c->kept_count; i++) n += c->kept[i].snap.cap;
    return n;
}
