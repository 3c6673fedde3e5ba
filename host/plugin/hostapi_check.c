/* SPDX-License-Identifier: MIT */
/* hostapi_check.c: what every function of the host table checks first, for hostapi.c and
 * hostapi_query.c alike: the calling thread (calls from another thread counted, reported at
 * a frame boundary), names, and the refusal of a bad call (hostapi.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "hostapi.h"
#include "log.h"
#include "plugin.h"
#include "session.h"

_Thread_local bool host_on_main_thread;

static host_plugin *plugin_of(const ecs_host *h)
{
    return (host_plugin *)(uintptr_t)h;
}

void host_api_other_thread(const ecs_host *h, const char *call)
{
    host_plugin *p = plugin_of(h);
    const char *none = NULL;
    atomic_compare_exchange_strong(&p->thread_call, &none, call);
    atomic_fetch_add(&p->thread_calls, 1);
}

/* Refuse a call: log it with the plugin's name and return the status. During load() the
 * first refusal is also kept as the plugin's reason, so the loader's skip line says it. */
ecs_status host_api_refuse(host_plugin *p, ecs_status s, const char *call, const char *what)
{
    host_error(p->name, "%s: %s (%s)", call, what, ecs_status_text(s));
    if (p->in_load && !p->registration_failed)
        snprintf(p->reason, sizeof p->reason, "%s: %s", call, what);
    return s;
}

/* Manager names are scene keys: [A-Za-z0-9_.-], 1..63 characters. */
bool host_api_valid_name(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        if (!ok || n >= 63) return false;
    }
    return n > 0;
}

void host_api_report_thread_calls(host_session *hs)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        uint32_t n = atomic_load_explicit(&p->thread_calls, memory_order_relaxed);
        if (n == p->thread_calls_reported) continue;
        host_error(p->name ? p->name : p->file,
                   "%u call%s to the host from a thread other than the main thread or from a "
                   "job refused (the first: %s): plugins call the host from the thread that "
                   "runs the frames, and from a job only what the SDK tags [job]",
                   n - p->thread_calls_reported, n - p->thread_calls_reported == 1 ? "" : "s",
                   atomic_load(&p->thread_call));
        p->thread_calls_reported = n;
    }
}

/* The manager named name, committed or pending in self; NULL when none. */
host_manager *host_manager_named(host_session *hs, host_plugin *self, const char *name)
{
    const host_world *w = hs->world;
    for (size_t i = 0; i < w->manager_count; i++) { /* a reload re-registers its own names */
        host_manager *m = w->managers[i];
        if (strcmp(m->name, name) == 0 && !(self->reloading && m->owner == self)) return m;
    }
    for (size_t i = 0; i < self->pending_manager_count; i++)
        if (strcmp(self->pending_managers[i]->name, name) == 0) return self->pending_managers[i];
    return NULL;
}
