/* SPDX-License-Identifier: MIT */
/* loop.c: the live loop (loop.h). */
#include "loop.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

void host_loop_init(host_loop *l, host_session *hs, int64_t from, int64_t to)
{
    *l = (host_loop){.hs = hs, .from = from, .to = to};
}

/* Stop after a failure (said by the caller). */
static bool stop(host_loop *l)
{
    host_snapshot_free(&l->snap);
    l->held = false;
    l->from = -1;
    return false;
}

/* Back to the loop's start. */
static bool rewind_loop(host_loop *l)
{
    char why[512];
    bool changed;
    if (host_snapshot_restore_own(l->hs, &l->snap, &changed, why, sizeof why) == ECS_OK)
        return l->passes++, true;
    host_error("loop", "cannot go back to frame %lld: %s; the loop stops", (long long)l->from, why);
    return stop(l);
}

bool host_loop_boundary(host_loop *l)
{
    char why[512];
    int64_t f = (int64_t)l->hs->world->frame.frame;
    if (l->from < 0) return true;
    if (f > l->from && !l->held) { /* --restore of a later frame: the start never comes */
        host_warn("loop", "the world is at frame %lld already, past the loop's start %lld: no loop",
                  (long long)f, (long long)l->from);
        l->from = -1;
        return true;
    }
    if (f == l->from && !l->held) {
        if (host_snapshot_take(l->hs, &l->snap, why, sizeof why) != ECS_OK) {
            host_error("loop", "no snapshot of frame %lld: %s; the loop stops", (long long)f, why);
            return stop(l);
        }
        l->held = true;
        if (l->passes == 0) {
            snprintf(l->said, sizeof l->said, "looping frames %lld-%lld", (long long)l->from,
                     (long long)l->to);
            host_info("loop", "%s (%zu bytes kept)", l->said, l->snap.size);
        }
        return true;
    }
    return f >= l->to && l->held ? rewind_loop(l) : true;
}

void host_loop_before_swap(void *arg, const char *plugin)
{
    host_loop *l = arg;
    if (l->from < 0 || !l->held) return;
    snprintf(l->plugin, sizeof l->plugin, "%s", plugin);
    if (rewind_loop(l)) l->swapped = true;
}

void host_loop_after_reloads(host_loop *l)
{
    if (!l->swapped) return;
    l->swapped = false;
    l->held = false; /* taken again below, into the same buffer */
    const char *version = "";
    for (size_t i = 0; i < l->hs->plugin_count; i++)
        if (strcmp(l->hs->plugins[i]->name, l->plugin) == 0) version = l->hs->plugins[i]->version;
    if (!host_loop_boundary(l)) return; /* at frame `from` again: taken with the new code */
    snprintf(l->said, sizeof l->said, "replaying frames %lld-%lld with %s %s", (long long)l->from,
             (long long)l->to, l->plugin, version);
    host_info("loop", "%s", l->said);
}

void host_loop_free(host_loop *l)
{
    host_snapshot_free(&l->snap);
    l->held = false;
}
