/* SPDX-License-Identifier: MIT */
/* reload.c: hot reload of plugins at a frame boundary (reload.h).
 *
 * A reload of plugin p: open the new file as a temporary record n (private copy, ELF,
 * entry, ABI) -> capture p's components as JSON if the state layout changed -> call n's
 * load() against p's table with p marked reloading, so its registrations stay pending ->
 * restore the captured JSON through the pending managers -> commit: pending managers
 * replace p's in place, APIs are rewritten in place -> unload the old version -> close
 * it. Until the commit nothing of p changed, so every failure is a plain rollback.
 */
#include "reload.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "json.h"
#include "log.h"
#include "perm.h"
#include "private.h"
#include "scene.h"
#include "watch.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#define MANIFEST_FILE "manifest.json"

typedef struct folder {
    char *dir;
    host_watch *watch;
    struct timespec manifest_mtime; /* of its manifest last applied (zero: none) */
    uint64_t manifest_checked_ns;   /* when its mtime was last looked at */
} folder;

/* A file that settled, waiting to be applied with the others of its quiet period. */
typedef struct settled {
    size_t folder;
    char *file;
    uint64_t changed_at;
} settled;

#define HOLD_MAX_NS 500000000ull /* settled files wait at most this long for the others */

struct host_reloader {
    host_session *hs; /* the session it reloads plugins of */
    settled *batch;   /* settled files not applied yet: one build's outputs, in its quiet period */
    size_t batch_count, batch_cap;
    uint64_t batch_since; /* when the first of them settled */
    folder *folders;      /* the plugin folders, in their order (plugin->folder indexes them) */
    size_t folder_count;
    host_reload_options opt;
    unsigned done, failed;
    void (*on_swap)(void *arg, const char *plugin); /* host_reloader_on_swap */
    void *on_swap_arg;
};

void host_reloader_on_swap(host_reloader *r, void (*fn)(void *arg, const char *plugin), void *arg)
{
    r->on_swap = fn, r->on_swap_arg = arg;
}

host_reloader *host_reloader_new(host_session *hs, const char *const *dirs, size_t n,
                                 const host_reload_options *opt)
{
    host_reloader *r = calloc(1, sizeof *r);
    if (!r || !(r->folders = calloc(n + 1, sizeof *r->folders))) {
        host_error("reload", "out of memory");
        free(r);
        return NULL;
    }
    if (!host_private_make(hs)) {
        free(r->folders);
        free(r);
        return NULL;
    }
    r->hs = hs;
    r->opt = *opt;
    for (size_t k = 0; k < n; k++, r->folder_count++) {
        folder *f = &r->folders[k];
        if (!(f->dir = strdup(dirs[k])) ||
            !(f->watch = host_watch_new(dirs[k], opt->poll, opt->quiet_ns, opt->poll_ns))) {
            free(f->dir);
            host_reloader_free(r);
            return NULL;
        }
        char manifest[PATH_MAX];
        struct stat st;
        snprintf(manifest, sizeof manifest, "%s/%s", dirs[k], MANIFEST_FILE);
        if (stat(manifest, &st) == 0) f->manifest_mtime = st.st_mtim; /* as the loader read it */
        bool absent = host_watch_absent(f->watch);
        host_info("reload", "watching %s%s%s (%s); private copies in %s", absent ? "for " : "",
                  dirs[k], absent ? " to appear" : "",
                  host_watch_inotify(f->watch) ? "inotify" : "polling", hs->private_dir);
    }
    return r;
}

void host_reloader_free(host_reloader *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->batch_count; i++) free(r->batch[i].file);
    free(r->batch);
    for (size_t k = 0; k < r->folder_count; k++) {
        host_watch_free(r->folders[k].watch);
        free(r->folders[k].dir);
    }
    free(r->folders);
    free(r);
}

void host_reloader_counts(const host_reloader *r, unsigned *done, unsigned *failed)
{
    *done = r->done;
    *failed = r->failed;
}

/* ---- helpers ---- */

/* p's managers in update order into a new array (free() it); NULL and *n = 0 when none. */
static host_manager **managers_of(host_session *hs, const host_plugin *p, size_t *n)
{
    host_manager **v = calloc(hs->world->manager_count + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < hs->world->manager_count; i++)
        if (hs->world->managers[i]->owner == p) v[(*n)++] = hs->world->managers[i];
    return v;
}

static uint32_t components_of(host_session *hs, const host_plugin *p)
{
    uint32_t n = 0;
    for (size_t i = 0; i < hs->world->manager_count; i++) {
        const host_manager *m = hs->world->managers[i];
        if (m->owner == p) n += host_manager_count(hs->world, m);
    }
    return n;
}

/* The version of API `name` q asked api_find for, when it uses it from p and p's new
 * version (its pending APIs) withdraws it or offers it below that version; 0 otherwise. */
static uint32_t withdrawn_from(host_session *hs, const host_plugin *p, const host_plugin *q,
                               const char *name)
{
    if (q == p || q->status != HOST_PLUGIN_LOADED) return 0;
    for (size_t u = 0; u < q->use_count; u++) {
        const host_api_entry *e = host_registry_entry(&hs->registry, q->uses[u].name);
        if (!e || e->owner != p || (name && strcmp(name, q->uses[u].name) != 0)) continue;
        bool kept = false;
        for (size_t a = 0; a < p->pending_api_count && !kept; a++)
            kept = strcmp(p->pending_apis[a].name, q->uses[u].name) == 0 &&
                   p->pending_apis[a].version >= q->uses[u].min_version;
        if (!kept) return q->uses[u].min_version ? q->uses[u].min_version : 1;
    }
    return 0;
}

/* An API p publishes now that p's new version withdraws (or offers below the version a
 * user asked for) while loaded plugins use it: false when there is none; else true, with
 * "API 'x' (version 2 or later), which plugins 'a' and 'b' use" in why, every user named. */
static bool withdrawn_api(host_session *hs, const host_plugin *p, char *why, size_t len)
{
    const char *api = NULL;
    for (size_t i = 0; i < hs->plugin_count && !api; i++) {
        const host_plugin *q = hs->plugins[i];
        for (size_t u = 0; u < q->use_count && !api; u++)
            if (withdrawn_from(hs, p, q, q->uses[u].name)) api = q->uses[u].name;
    }
    if (!api) return false;
    char users[400] = "";
    size_t n = 0, used = 0, total = 0;
    uint32_t version = 0;
    for (size_t i = 0; i < hs->plugin_count; i++)
        total += withdrawn_from(hs, p, hs->plugins[i], api) != 0;
    for (size_t i = 0; i < hs->plugin_count && used < sizeof users; i++) {
        uint32_t v = withdrawn_from(hs, p, hs->plugins[i], api);
        if (!v) continue;
        if (v > version) version = v;
        n++;
        used += (size_t)snprintf(users + used, sizeof users - used, "%s'%s'",
                                 n == 1       ? ""
                                 : n == total ? " and "
                                              : ", ",
                                 hs->plugins[i]->name);
    }
    host_format(why, len, "API '%s' (version %u or later), which plugin%s %s use%s", api, version,
                total > 1 ? "s" : "", users, total > 1 ? "" : "s");
    return true;
}

/* The first dependency of n that is not loaded, or NULL. */
static const char *missing_dependency(host_session *hs, const host_plugin *n)
{
    for (char **d = n->deps; d && *d; d++)
        if (!host_plugin_named(hs, *d)) return *d;
    return NULL;
}

/* Can p's managers move through JSON? A manager without write_component or
 * save_component (old) or without load_component (new) says no. The manager that cannot,
 * or NULL. */
static const char *cannot_migrate(host_manager *const *v, size_t n, bool saving)
{
    for (size_t i = 0; i < n; i++)
        if (saving ? !host_manager_saves(v[i]) : !host_manager_loads(v[i])) return v[i]->name;
    return NULL;
}

/* Does n record another state layout than p under the same state_version? Only layouts
 * both builds recorded are compared (ECS_STATE_LAYOUT; a build for ABI 1.0 records none).
 * True with the difference in why. */
static bool layout_changed(const host_plugin *p, const host_plugin *n, char *why, size_t len)
{
    bool size = p->state_size && n->state_size && p->state_size != n->state_size;
    bool hash = p->state_hash && n->state_hash && p->state_hash != n->state_hash;
    if (size)
        host_format(why, len, "the state is %u bytes, not %u", n->state_size, p->state_size);
    else if (hash)
        host_format(why, len, "the state's fields moved (layout hash %08x, not %08x)",
                    n->state_hash, p->state_hash);
    return size || hash;
}

#define COUNT_LIMIT (ECS_ENTITY_MAX_INDEX + 1u) /* 2^22: entity indices there can be */

/* After n's load() adopted p's state: a pending manager whose count() reports more than
 * 2^22 components where p's manager of that name did not (a state read through another
 * layout), or crashes. Its name, with the count in *count (0 after a crash, the signal in
 * *sig); NULL when every count can be trusted. */
static const char *untrusted_count(host_session *hs, host_plugin *p, uint32_t *count, int *sig)
{
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        const host_manager *nm = p->pending_managers[i];
        if (!nm->desc.count) continue;
        uint32_t n = 0, old = 0;
        if ((*sig = host_manager_count_guarded(hs->world, nm, &n)) != 0)
            return *count = 0, nm->name;
        if (n <= COUNT_LIMIT) continue;
        long at = -1;
        for (size_t k = 0; k < hs->world->manager_count && at < 0; k++)
            if (hs->world->managers[k]->owner == p &&
                !strcmp(hs->world->managers[k]->name, nm->name))
                at = (long)k;
        if (at >= 0)
            old = host_manager_count(hs->world,
                                     hs->world->managers[at]); /* the running code: trusted */
        if (old != n) return *count = n, nm->name;
    }
    return NULL;
}

/* ---- committing a new version in place ---- */

/* The position of p's manager called name in the update order, or -1. */
static long own_manager(const host_session *hs, const host_plugin *p, const char *name)
{
    for (size_t i = 0; i < hs->world->manager_count; i++)
        if (hs->world->managers[i]->owner == p && strcmp(hs->world->managers[i]->name, name) == 0)
            return (long)i;
    return -1;
}

/* Withdraw the APIs of p that the new version (names) does not publish again. */
static void withdraw_dropped_apis(host_session *hs, host_plugin *p, char **names, size_t count)
{
    for (size_t i = 0; i < p->api_count; i++) {
        bool again = false;
        for (size_t j = 0; j < count && !again; j++) again = !strcmp(names[j], p->api_names[i]);
        host_api_entry *e = again ? NULL : host_registry_entry(&hs->registry, p->api_names[i]);
        if (e) {
            memset(e->storage, 0, e->capacity);
            e->owner = NULL;
        }
        free(p->api_names[i]);
    }
    free(p->api_names);
}

/* The position of p's system called name in hs->world->systems, or -1. */
static long own_system(const host_session *hs, const host_plugin *p, const char *name)
{
    for (size_t i = 0; i < hs->world->system_count; i++)
        if (hs->world->systems[i]->owner == p && strcmp(hs->world->systems[i]->name, name) == 0)
            return (long)i;
    return -1;
}

/* Replace p's systems by its pending ones, like managers: the same name keeps its record
 * (its place in the order, its timings) and takes the new function, state, weight and
 * collection; new ones are appended; the ones not registered again go. renewed has room
 * for every system and the pending ones (zeroed); hs->world->systems has room for them. */
static void replace_systems(host_session *hs, host_plugin *p, bool *renewed)
{
    for (size_t i = 0; i < p->pending_system_count; i++) {
        host_system *ns = p->pending_systems[i];
        long at = own_system(hs, p, ns->name);
        if (at >= 0) {
            host_system *os = hs->world->systems[at];
            os->desc = ns->desc;
            os->desc.name = os->name;
            os->collection = ns->collection;
            host_system_free(ns);
            renewed[at] = true;
        } else {
            renewed[hs->world->system_count] = true;
            hs->world->systems[hs->world->system_count++] = ns;
        }
        p->pending_systems[i] = NULL;
    }
    size_t kept = 0, count = 0;
    for (size_t i = 0; i < hs->world->system_count; i++) {
        host_system *sys = hs->world->systems[i];
        if (sys->owner == p && !renewed[i]) {
            host_warn("reload", "%s: the new version no longer registers system '%s'", p->name,
                      sys->name);
            host_system_free(sys);
            continue;
        }
        count += sys->owner == p;
        hs->world->systems[kept++] = sys;
    }
    hs->world->system_count = kept;
    p->system_count = count;
    p->pending_system_count = 0;
}

/* p's new collection references replace its old ones (taken before the old are dropped,
 * so a collection both hold stays up to date). */
static void replace_collections(host_session *hs, host_plugin *p)
{
    for (size_t i = 0; i < p->pending_collection_count; i++)
        host_collections_ref(&hs->world->collections, &hs->world->sig, p->pending_collections[i]);
    for (size_t i = 0; i < p->collection_count; i++)
        host_collections_unref(&hs->world->collections, &hs->world->sig, p->collections[i]);
    free(p->collections);
    p->collections = p->pending_collections;
    p->collection_count = p->pending_collection_count;
    p->pending_collections = NULL;
    p->pending_collection_count = 0;
}

/* Replace p's managers, systems and APIs by its pending ones: same names keep their place
 * (and their API storage), new ones are appended, the ones not registered again go. All
 * the memory is found first, so nothing changes unless everything can. */
static ecs_status commit_replace(host_session *hs, host_plugin *p)
{
    if (host_plugin_reserve_for(hs, p) != ECS_OK) return ECS_ERR_NO_MEMORY;
    size_t need = hs->world->manager_count + p->pending_manager_count;
    size_t systems = hs->world->system_count + p->pending_system_count;
    char **names = calloc(p->pending_api_count + 1, sizeof *names);
    bool *renewed = calloc(need + 1, sizeof *renewed);
    bool *sys_renewed = calloc(systems + 1, sizeof *sys_renewed);
    if (!names || !renewed || !sys_renewed) {
        free(sys_renewed);
        free(names);
        free(renewed);
        return ECS_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < p->pending_api_count; i++) { /* cannot fail: they fit (checked) */
        host_pending_api *a = &p->pending_apis[i];
        host_registry_publish(&hs->registry, p, a->name, a->version, a->bytes, a->size);
        names[i] = a->name;
        a->name = NULL;
    }
    withdraw_dropped_apis(hs, p, names, p->pending_api_count);
    p->api_names = names;
    p->api_count = p->pending_api_count;
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        host_manager *nm = p->pending_managers[i];
        long at = own_manager(hs, p, nm->name);
        if (at >= 0) { /* same place in the update order, same timings */
            host_manager *om = hs->world->managers[at];
            om->desc = nm->desc;
            om->desc.name = om->name;
            om->index = nm->index; /* views built before the reload read the new code */
            free(nm->name);
            free(nm);
            renewed[at] = true;
        } else {
            renewed[hs->world->manager_count] = true;
            hs->world->managers[hs->world->manager_count++] = nm;
        }
        p->pending_managers[i] = NULL;
    }
    size_t kept = 0, count = 0;
    for (size_t i = 0; i < hs->world->manager_count; i++) { /* drop managers not registered again */
        host_manager *m = hs->world->managers[i];
        if (m->owner == p && !renewed[i]) {
            host_warn("reload", "%s: the new version no longer registers manager '%s'", p->name,
                      m->name);
            host_sig_clear_bit(&hs->world->sig, m->bit); /* its components went with it */
            free(m->name);
            free(m);
            continue;
        }
        count += m->owner == p;
        hs->world->managers[kept++] = m;
    }
    hs->world->manager_count = kept;
    p->manager_count = count;
    free(renewed);
    p->pending_manager_count = 0;
    replace_systems(hs, p, sys_renewed);
    free(sys_renewed);
    replace_collections(hs, p);
    p->pstate = p->pending_pstate; /* the new build's own state, or none */
    p->has_pstate = p->has_pending_pstate;
    p->pending_entity_count = 0; /* the new version stands: its entities stay */
    host_plugin_discard_pending(p);
    host_world_managers_changed(hs->world);
    return ECS_OK;
}

/* ---- the three events: changed, new, deleted ---- */

/* Take over the new version's shared object, copy and description into p. keep: the
 * state was handed over, so the old version stays mapped as the one to roll back to. */
static void adopt(host_plugin *p, host_plugin *n, void *state, bool keep)
{
    void *old_dl = p->dl;
    char *old_copy = p->copy_path, *old_version = keep ? strdup(p->version) : NULL;
    const ecs_plugin_desc *old_desc = p->desc;
    char old_build[sizeof p->build];
    memcpy(old_build, p->build, sizeof old_build);
    host_plugin_forget_previous(p); /* one version back at most */
    memcpy(p->build, n->build, sizeof p->build);
    p->dl = n->dl;
    p->copy_path = n->copy_path;
    p->desc = n->desc;
    p->state = state;
    n->dl = NULL;
    n->copy_path = NULL;
    char *v = p->version, **d = p->deps;
    p->version = n->version, n->version = v;
    p->deps = n->deps, n->deps = d;
    p->abi_major = n->abi_major;
    p->abi_minor = n->abi_minor;
    p->state_version = n->state_version;
    p->state_size = n->state_size;
    p->state_hash = n->state_hash;
    if (keep && old_version) {
        p->prev_dl = old_dl;
        p->prev_desc = old_desc;
        p->prev_copy = old_copy;
        p->prev_version = old_version;
        memcpy(p->prev_build, old_build, sizeof p->prev_build);
    } else {
        free(old_version);
        host_plugin_close_version(p, old_dl, old_copy);
    }
}

typedef struct prev_load {
    host_plugin *p;
    const ecs_load_args *args;
    void *state;
    ecs_status status;
} prev_load;

static void call_prev_load(void *arg)
{
    prev_load *c = arg;
    c->status = c->p->prev_desc->load(&c->p->table, c->args, &c->state);
}

/* "2.0.0 (build of 14:03:22, 5d41402a)" into buf: a version and which build of it (two
 * builds of one version told apart); the version alone when the build is not known. */
static void build_text(char *buf, size_t len, const char *version, const char *build)
{
    host_format(buf, len, "%s%s%s%s", version ? version : "?", *build ? " (" : "", build,
                *build ? ")" : "");
}

bool host_reload_rollback(host_session *hs, host_plugin *p)
{
    if (!p->prev_dl) return false;
    ecs_load_args args = {sizeof args, p->state}; /* same layout: it takes the state back */
    prev_load c = {p, &args, NULL, ECS_OK};
    host_api_use *crashed_uses = p->uses; /* the old build finds its APIs again */
    size_t crashed_use_count = p->use_count;
    p->uses = NULL, p->use_count = 0;
    p->in_load = p->reloading = true;
    p->registration_failed = false;
    host_call named = {p->name, "load() of the build before", NULL};
    int sig = host_guard_call(&named, call_prev_load, &c);
    p->in_load = false;
    bool ok =
        !sig && c.status == ECS_OK && !p->registration_failed && commit_replace(hs, p) == ECS_OK;
    p->reloading = false;
    host_plugin_discard_pending(p);
    host_plugin_keep_uses(p, ok, crashed_uses, crashed_use_count);
    if (!ok && !sig && c.status == ECS_OK) host_plugin_outcome(p, false);
    if (!ok) {
        p->commit_fn = NULL; /* its load() failed or crashed: it hears nothing */
        char prev[64];
        build_text(prev, sizeof prev, p->prev_version, p->prev_build);
        host_error("guard", "%s: version %s could not take over again: the plugin is unloaded",
                   p->name, prev);
        host_plugin_note(p, HOST_EVENT_REFUSED, "no rollback: version %s could not take over again",
                         prev);
        host_plugin_forget_previous(p);
        return false;
    }
    void *bad_dl = p->dl; /* the crashed build: never called again */
    char *bad_copy = p->copy_path, bad[64], good[64];
    build_text(bad, sizeof bad, p->version, p->build);
    build_text(good, sizeof good, p->prev_version, p->prev_build);
    free(p->version);
    memcpy(p->build, p->prev_build, sizeof p->build);
    p->dl = p->prev_dl;
    p->desc = p->prev_desc;
    p->copy_path = p->prev_copy;
    p->version = p->prev_version;
    p->abi_major = p->desc->abi_major;
    p->abi_minor = p->desc->abi_minor;
    host_plugin_desc_layout(p, p->desc);
    p->state = c.state;
    p->prev_dl = NULL;
    p->prev_desc = NULL;
    p->prev_copy = p->prev_version = NULL;
    p->crashed = false;
    host_plugin_outcome(p, true);         /* the state is that build's again */
    host_plugin_dlclose(bad_dl, p->name); /* its destructors may crash too */
    if (bad_copy) unlink(bad_copy);
    free(bad_copy);
    host_warn("guard", "%s: rolled back from the crashed version %s to version %s, state kept",
              p->name, bad, good);
    host_plugin_note(p, HOST_EVENT_ROLLBACK, "rolled back from the crashed %s to %s, state kept",
                     bad, good);
    return true;
}

/* Keep what a reload of p did in its history (the inspector's). */
static void note(host_reloader *r, host_plugin *p, bool done, const char *what)
{
    (void)r;
    host_plugin_note(p, done ? HOST_EVENT_RELOAD : HOST_EVENT_REFUSED, "%s", what);
}

static void refuse(host_reloader *r, host_plugin *p, const char *fmt, ...) ECS_PRINTF(3, 4);
static void refuse(host_reloader *r, host_plugin *p, const char *fmt, ...)
{
    char why[600], what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    host_error("reload", "%s: new build refused, version %s keeps running: %s", p->name, p->version,
               why);
    host_format(what, sizeof what, "refused: %s", why);
    note(r, p, false, what);
    r->failed++;
}

/* The plugin calls of a reload, each run under the crash guard with --safe. */
typedef struct new_load {
    host_plugin *p, *n;
    const ecs_load_args *args;
    void *state;
    ecs_status status;
    const host_scene_captured *doc; /* the captured components */
    int crashed;                    /* the signal that stopped the new version's migration, or 0 */
    uint64_t restore_ns;            /* how long the new version took to read them */
} new_load;

static void call_new_load(void *arg)
{
    new_load *c = arg;
    c->status = c->n->desc->load(&c->p->table, c->args, &c->state);
}

static void call_restore(void *arg)
{
    new_load *c = arg;
    host_plugin *p = c->p;
    uint64_t t0 = host_now_ns();
    c->status = host_scene_restore(p->session->scene, c->doc, p->pending_managers,
                                   p->pending_manager_count, p->name, &c->crashed);
    c->restore_ns = host_now_ns() - t0;
}

/* A migration's new build (version) is swapped in (its memory joins p's) or refused: what
 * it left allocated is freed now and said, rather than reported as p's leak at exit (a
 * build that crashed never had its unload() called). */
static void end_attempt(host_plugin *p, bool swapped, const char *version)
{
    if (!p->attempting) return;
    p->attempting = false;
    if (swapped) {
        host_mem_move_all(&p->mem, &p->attempt_mem);
    } else if (p->attempt_mem.blocks) {
        host_warn("reload",
                  "%s: the refused build %s held %zu bytes in %zu allocations when it was "
                  "refused: freed by the host",
                  p->name, version ? version : "?", p->attempt_mem.bytes, p->attempt_mem.blocks);
        host_mem_release_all(&p->attempt_mem);
    }
}

/* A migration: the new build of p reads the old build's own state text[0..len) (with its
 * pending state offer). A new build that offers none leaves it kept in the scene store,
 * for a later build that does. False with the reason in why (and a crash's signal in
 * *sig). */
static bool migrate_state(host_session *hs, host_plugin *p, const char *text, size_t len, int *sig,
                          char *why, size_t whylen)
{
    size_t at = 0;
    *sig = 0;
    if (p->has_pending_pstate)
        return host_plugin_state_read(p, &p->pending_pstate, text, len, 0, &at, sig, why, whylen) ==
               ECS_OK;
    host_info("reload", "%s: the new version offers no plugin state: the old one's is kept",
              p->name);
    if (host_scene_keep_state(hs->scene, p->name, text, len)) return true;
    host_format(why, whylen, "out of memory keeping it");
    return false;
}

/* Load n's code beside p's and, if that works, swap it in. */
static void reload(host_reloader *r, host_plugin *p, host_plugin *n, uint64_t changed_at)
{
    host_session *hs = r->hs;
    bool same = n->state_version == p->state_version;
    size_t count = 0;
    host_manager **old = managers_of(hs, p, &count);
    const char *why = NULL;
    char withdrawn[600];
    uint32_t bad_count = 0;
    host_scene_captured doc = {0};
    char *state_text = NULL; /* a migration's: the old build's own state as JSON */
    if (!old) {
        refuse(r, p, "out of memory");
        return;
    }
    char layout[160];
    if (same && layout_changed(p, n, layout, sizeof layout)) {
        refuse(r, p,
               "its state layout changed under the same state_version %u (%s): bump "
               "state_version so the components migrate through JSON",
               n->state_version, layout);
        goto done;
    }
    if (!same && (why = cannot_migrate(old, count, true))) {
        refuse(r, p,
               "state version %u -> %u needs a JSON migration, but manager '%s' cannot "
               "save its components",
               p->state_version, n->state_version, why);
        goto done;
    }
    uint64_t capture_ns = host_now_ns();
    if (!same && !host_scene_capture(hs->scene, old, count, &doc)) {
        refuse(r, p, "the old version could not save its components");
        goto done;
    }
    capture_ns = host_now_ns() - capture_ns;
    char state_why[400] = ""; /* and its own state, which the new build reads after them */
    size_t state_len = 0;
    state_text = same ? NULL : host_plugin_state_text(p, &state_len, state_why, sizeof state_why);
    if (*state_why) {
        refuse(r, p, "the old version could not write its plugin state: %s", state_why);
        goto done;
    }
    ecs_load_args args = {sizeof args, same ? p->state : NULL};
    new_load c = {p, n, &args, NULL, ECS_OK, &doc, 0, 0};
    host_api_use *old_uses = p->uses; /* the old build's edges: the new one makes its own */
    size_t old_use_count = p->use_count;
    bool swapped = false;
    char text[400];
    p->uses = NULL, p->use_count = 0;
    host_plugin_begin_load(p);
    p->reloading = true;
    p->attempting = !same; /* a new state: its memory apart until the host accepts it */
    host_call named = {p->name, "load() of the new build", NULL};
    int sig = host_guard_call(&named, call_new_load, &c);
    p->in_load = false;
    ecs_status s = c.status;
    void *state = c.state;
    ecs_unload_reason undo = same ? ECS_UNLOAD_RELOAD_KEEP_STATE : ECS_UNLOAD_SHUTDOWN;
    if (sig) { /* never call that build again (a new state it made: freed in end_attempt) */
        refuse(r, p, "its load() %s", host_signame_outcome(sig));
    } else if (s == ECS_OK && p->registration_failed) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "its load() went on after a refused registration: %s", p->reason);
    } else if (s != ECS_OK) { /* one that wanted an API is tried again when it comes */
        char missing[300];
        host_plugin_missing_api(hs, p, missing, sizeof missing);
        refuse(r, p, "its load() failed: %s%s%s", ecs_status_text(s), *missing ? ": " : "",
               missing);
    } else if (host_plugin_closes_cycle(hs, p, NULL, p->uses, p->use_count, text, sizeof text)) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "dependency cycle: %s (an API its load() found)", text);
    } else if (!same &&
               (why = cannot_migrate(p->pending_managers, p->pending_manager_count, false))) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "manager '%s' of the new version cannot load components", why);
    } else if (!same && (call_restore(&c), sig = c.crashed) != 0) { /* guarded inside */
        refuse(r, p, "the new version %s loading the components", host_signame_outcome(sig));
    } else if (!same && c.status != ECS_OK) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "the new version could not load the components (see above)");
    } else if (state_len &&
               !migrate_state(hs, p, state_text, state_len, &sig, state_why, sizeof state_why)) {
        if (!sig) host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "the new version could not read the plugin state: %s", state_why);
    } else if (same && (why = untrusted_count(hs, p, &bad_count, &sig)) != NULL) {
        if (!sig) host_plugin_undo_load(p, n->desc, state, undo);
        if (sig)
            refuse(r, p, "manager '%s' crashed with %s counting the components it was handed", why,
                   host_signame(sig));
        else
            refuse(r, p,
                   "manager '%s' counts %u components in the state handed over, more than "
                   "there can be entities (2^22): it reads the state through another layout; "
                   "bump state_version so the components migrate through JSON",
                   why, bad_count);
    } else if (withdrawn_api(hs, p, withdrawn, sizeof withdrawn)) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "it no longer publishes %s", withdrawn);
    } else if (!host_plugin_apis_fit(hs, p, text, sizeof text)) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "%s", text);
    } else if (commit_replace(hs, p) != ECS_OK) {
        host_plugin_undo_load(p, n->desc, state, undo);
        refuse(r, p, "out of memory");
    } else {
        const ecs_plugin_desc *old_desc = p->desc;
        void *old_state = p->state;
        char *old_version = strdup(p->version);
        sig = host_plugin_call_unload(p, old_desc, old_state,
                                      same ? ECS_UNLOAD_RELOAD_KEEP_STATE
                                           : ECS_UNLOAD_RELOAD_MIGRATED);
        if (sig != 0)
            host_warn("reload",
                      "%s: the old version's crash in unload() is ignored: the new one "
                      "runs",
                      p->name);
        adopt(p, n, state, same);
        host_plugin_outcome(p, true);     /* two-phase adoption: the state is the new build's */
        host_plugin_restore_state(hs, p); /* one kept while a build that offers none ran */
        swapped = true;
        r->done++;
        char what[160];
        double ms = (double)(host_now_ns() - changed_at) / 1e6;
        host_format(what, sizeof what, "%s -> %s: %s, %u components kept, %.2f ms",
                    old_version ? old_version : "?", p->version,
                    same ? "same state layout" : "JSON migration", components_of(hs, p), ms);
        note(r, p, true, what);
        host_info("reload", "%s %s -> %s: %s, %u components kept, %.2f ms from change to swap",
                  p->name, old_version ? old_version : "?", p->version,
                  same ? "same state layout" : "JSON migration", components_of(hs, p), ms);
        if (!same) /* which side of a migration is slow: the old version's or the new one's */
            host_detail("reload",
                        "%s: JSON migration: the old version wrote the components in %.2f ms, "
                        "the new one read them in %.2f ms",
                        p->name, (double)capture_ns * 1e-6, (double)c.restore_ns * 1e-6);
        free(old_version);
    }
    p->reloading = false;
    end_attempt(p, swapped, n->version);
    if (sig || s == ECS_OK) p->missing_api[0] = '\0'; /* only a failed load() waits for one */
    p->commit_fn = NULL;            /* a load() that failed or crashed hears nothing */
    host_plugin_discard_pending(p); /* nothing left after a commit; the attempt otherwise */
    host_plugin_keep_uses(p, swapped, old_uses, old_use_count);
done:
    host_scene_captured_free(&doc);
    free(state_text);
    free(old);
}

/* The file of loaded plugin p is gone: unload it, keeping its components as JSON. */
static void remove_plugin(host_reloader *r, host_plugin *p)
{
    host_session *hs = r->hs;
    host_plugin_park_dependents(hs, p, "is disabled by " MANIFEST_FILE);
    host_kept k = host_plugin_keep(hs, p);
    const char *kept = k == HOST_KEPT        ? "; its components are kept and come back with it"
                       : k == HOST_KEPT_NONE ? "; it has no components to keep"
                                             : "; its components could not be kept";
    host_info("reload", "%s: disabled by %s: plugin '%s' unloaded%s", p->file, MANIFEST_FILE,
              p->name, kept);
    host_plugin_note(p, HOST_EVENT_UNLOAD, "disabled by %s: unloaded%s", MANIFEST_FILE, kept);
    host_plugin_unload(hs, p, ECS_UNLOAD_SHUTDOWN);
    host_plugin_forget_previous(p);
    host_plugin_release(p);
    snprintf(p->reason, sizeof p->reason, "disabled by %s", MANIFEST_FILE);
    p->status = HOST_PLUGIN_DISABLED;
}

/* A plugin file that is new (or back): load it like at start, then restore kept data. */
static void add_plugin(host_reloader *r, host_plugin *n)
{
    host_session *hs = r->hs;
    const char *dep = missing_dependency(hs, n);
    if (host_plugin_named(hs, n->name)) { /* from a newer file: rebuilt_plugin's */
        host_error("reload",
                   "%s: plugin name '%s' is already loaded from %s, a newer file: ignored "
                   "(touch this file to make it the plugin's new build)",
                   n->path, n->name, host_plugin_named(hs, n->name)->file);
    } else if (dep) {
        host_error("reload", "%s: plugin '%s' needs '%s', which is not loaded: ignored", n->path,
                   n->name, dep);
    } else if (host_plugin_load(hs, n) != ECS_OK) {
        host_error("reload", "%s: %s", n->path, n->reason);
    } else {
        size_t count = 0;
        host_manager **mgrs = managers_of(hs, n, &count);
        bool restored = !mgrs || host_scene_restore_kept(hs->scene, mgrs, count) == ECS_OK;
        if (!restored)
            host_warn("reload", "%s: its kept components could not be restored: they stay kept",
                      n->name);
        free(mgrs);
        host_plugin_restore_state(hs, n); /* its own state, after its components */
        if (n->reload_count) /* a record that was unloaded or parked: its history goes on */
            host_plugin_note(n, HOST_EVENT_BACK, "%s loaded again%s", n->version,
                             restored ? ", its kept components restored"
                                      : "; its kept components could not be restored");
        r->done++;
        return;
    }
    r->failed++;
    n->status = HOST_PLUGIN_SKIPPED;
    host_plugin_release(n); /* its record stays, its mapping and copy go */
}

/* The record that came from file of folder k, in any state (a loaded one first), or NULL. */
static host_plugin *record_of(host_session *hs, size_t k, const char *file)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < hs->plugin_count; i++) {
            host_plugin *p = hs->plugins[i];
            if ((size_t)p->folder == k && strcmp(p->file, file) == 0 &&
                (pass || p->status == HOST_PLUGIN_LOADED))
                return p;
        }
    return NULL;
}

static void forget_record(host_session *hs, host_plugin *p)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        if (hs->plugins[i] != p) continue;
        memmove(&hs->plugins[i], &hs->plugins[i + 1],
                (hs->plugin_count - i - 1) * sizeof *hs->plugins);
        hs->plugin_count--;
        break;
    }
    host_plugin_free(p);
}

/* Is file a modified later than file b? */
static bool newer_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return sa.st_mtim.tv_sec != sb.st_mtim.tv_sec ? sa.st_mtim.tv_sec > sb.st_mtim.tv_sec
                                                  : sa.st_mtim.tv_nsec > sb.st_mtim.tv_nsec;
}

/* The loaded plugin named like n (from another file) that n is a new build of: its own
 * file is gone (renamed or deleted: *gone), or older than n's (a build written again
 * where it was before a move, or under another name, in any plugin folder). NULL when
 * none: n is another plugin, or an older file of a loaded one. */
static host_plugin *rebuilt_plugin(host_reloader *r, const host_plugin *n, bool *gone)
{
    host_plugin *p = host_plugin_named(r->hs, n->name);
    struct stat st;
    if (!p || p->status != HOST_PLUGIN_LOADED) return NULL;
    *gone = stat(p->path, &st) != 0;
    return *gone || newer_file(n->path, p->path) ? p : NULL;
}

/* n, a new file of loaded plugin p (rebuilt_plugin): a move (mv, or a build that writes
 * its output under a new name) when p's file is gone, else a newer build beside it.
 * Reload p from n; p answers to n's file from now on. */
static void take_over(host_reloader *r, host_plugin *p, host_plugin *n, bool gone,
                      uint64_t changed_at)
{
    char *path = strdup(n->path), *file = strdup(n->file);
    unsigned done = r->done;
    if (path && file) {
        if (gone)
            host_info("reload", "%s: plugin '%s' moved here from %s", n->path, p->name, p->file);
        else
            host_info("reload",
                      "%s: plugin '%s' has a newer file here than %s: a new build of it, and "
                      "the plugin follows this file from now on",
                      n->path, p->name, p->file);
        reload(r, p, n, changed_at);
    }
    if (path && file && r->done != done) { /* swapped: the record follows the file */
        free(p->path);
        free(p->file);
        p->path = path;
        p->file = file;
        p->folder = n->folder;
        path = file = NULL;
    }
    free(path);
    free(file);
    host_plugin_free(n);
}

static void apply(host_reloader *r, size_t k, const char *file, uint64_t changed_at)
{
    host_session *hs = r->hs;
    char path[PATH_MAX], why[600];
    struct stat st;
    const char *dir = r->folders[k].dir;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    host_plugin *p = record_of(hs, k, file);
    bool loaded = p && p->status == HOST_PLUGIN_LOADED;
    if (stat(path, &st) != 0) { /* a deleted file never unloads: a failed link deletes it */
        if (loaded)
            host_warn("reload",
                      "%s: source deleted: still running %s %s (a new file here, or any file "
                      "of plugin '%s', reloads it; %s unloads it)",
                      file, p->name, p->version, p->name, MANIFEST_FILE);
        return;
    }
    if (host_plugin_path_insecure(dir, file, true, r->opt.allow_insecure, why, sizeof why)) {
        host_error("reload", "%s: refused: %s", path, why);
        r->failed++;
        return;
    }
    int bad_before = hs->bad_plugins;
    hs->quiet_skips = true; /* one line per bad build: the reloader's */
    host_plugin *n = host_plugin_open(hs, path, file);
    hs->quiet_skips = false;
    hs->bad_plugins = bad_before; /* a bad build is reported here, not counted for --strict */
    if (!n) {
        host_error("reload", "%s: out of memory", path);
        return;
    }
    n->folder = (int)k;
    n->rank = p ? p->rank : (int)k * HOST_FOLDER_RANKS + HOST_FOLDER_RANKS - 1;
    host_plugin *moved = NULL; /* the plugin this file is a new build of (moved or newer) */
    bool gone = false;
    if (n->status == HOST_PLUGIN_FOUND && !loaded) moved = rebuilt_plugin(r, n, &gone);
    if (n->status != HOST_PLUGIN_FOUND) {
        if (loaded)
            refuse(r, p, "%s", n->reason);
        else { /* one line per refused file version */
            host_error("reload", "%s: refused: %s", path, n->reason);
            r->failed++;
        }
        host_plugin_free(n);
    } else if (moved) {
        if (p) forget_record(hs, p); /* this file's old record: refused or ignored */
        take_over(r, moved, n, gone, changed_at);
    } else if (loaded && strcmp(n->name, p->name) != 0) {
        refuse(r, p, "%s now holds plugin '%s'", file, n->name);
        host_plugin_free(n);
    } else if (loaded && missing_dependency(hs, n)) {
        refuse(r, p, "it needs '%s', which is not loaded", missing_dependency(hs, n));
        host_plugin_free(n);
    } else if (loaded && host_plugin_closes_cycle(hs, p, n->deps, NULL, 0, why, sizeof why)) {
        refuse(r, p, "dependency cycle: %s", why); /* as at start: a cycle cannot load */
        host_plugin_free(n);
    } else if (loaded) {
        if (r->on_swap) r->on_swap(r->on_swap_arg, p->name); /* the live loop: its start */
        reload(r, p, n, changed_at);
        host_plugin_free(n);
    } else if (host_plugin_push(hs, n) != 0) {
        host_plugin_free(n);
    } else {
        if (p) { /* the old record of this file (failed, unloaded, parked): its history stays */
            memcpy(n->reloads, p->reloads, sizeof n->reloads);
            n->reload_count = p->reload_count;
            forget_record(hs, p);
        }
        add_plugin(r, n);
    }
}

/* Is `name` marked "disabled": true in the manifest's plugins? */
static bool disabled_in(const cJSON *manifest, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(manifest, "plugins"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "disabled"));
    }
    return false;
}

/* The manifest of folder k changed: unload the plugins of that folder it now disables
 * (components kept as JSON) and load again, components restored, the ones it no longer
 * disables. Unloading is asked for here and only here: a deleted file never unloads. */
static void apply_manifest_change(host_reloader *r, size_t k)
{
    char path[PATH_MAX], err[600];
    snprintf(path, sizeof path, "%s/%s", r->folders[k].dir, MANIFEST_FILE);
    struct stat st;
    cJSON *m =
        stat(path, &st) == 0 ? host_json_read_file(path, err, sizeof err) : cJSON_CreateObject();
    if (!m) {
        host_error("reload", "%s: not applied: %s", MANIFEST_FILE, err);
        return;
    }
    for (size_t i = r->hs->plugin_count; i-- > 0;) { /* dependents were loaded after providers */
        host_plugin *p = r->hs->plugins[i];
        if ((size_t)p->folder == k && p->status == HOST_PLUGIN_LOADED && disabled_in(m, p->name))
            remove_plugin(r, p);
    }
    size_t n = 0;
    char **files = calloc(r->hs->plugin_count + 1, sizeof *files); /* enabled again */
    for (size_t i = 0; files && i < r->hs->plugin_count; i++) {
        host_plugin *p = r->hs->plugins[i];
        if ((size_t)p->folder == k && p->status == HOST_PLUGIN_DISABLED &&
            !(p->name && disabled_in(m, p->name)))
            files[n++] = strdup(p->file);
    }
    for (size_t i = 0; i < n; i++) {
        if (files[i]) apply(r, k, files[i], host_now_ns()); /* a new record replaces the old */
        free(files[i]);
    }
    free(files);
    cJSON_Delete(m);
}

/* Look at folder k's manifest's mtime (at most every 100 ms); apply it when it changed. */
static void check_manifest(host_reloader *r, size_t k, uint64_t now)
{
    folder *f = &r->folders[k];
    if (now - f->manifest_checked_ns < 100000000u) return;
    f->manifest_checked_ns = now;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", f->dir, MANIFEST_FILE);
    struct stat st;
    struct timespec mtime = {0, 0};
    if (stat(path, &st) == 0) mtime = st.st_mtim;
    if (mtime.tv_sec == f->manifest_mtime.tv_sec && mtime.tv_nsec == f->manifest_mtime.tv_nsec)
        return;
    if (mtime.tv_sec && st.st_size == 0)
        return; /* being written (truncated, not yet filled):
                   looked at again when it changes */
    f->manifest_mtime = mtime;
    apply_manifest_change(r, k);
}

/* Can parked plugin q come back: is every plugin it declares loaded, every API it found
 * published again (at the version it asked for)? */
static bool can_come_back(host_session *hs, const host_plugin *q)
{
    if (missing_dependency(hs, q)) return false;
    for (size_t u = 0; u < q->use_count; u++)
        if (!host_registry_find(&hs->registry, q->uses[u].name, q->uses[u].min_version, NULL))
            return false;
    return true;
}

/* Bring back the parked plugins whose providers are back: loaded again from their files,
 * components restored, in load order (providers first; a chain comes back one link per
 * frame). One try each: one that cannot come back is left unloaded, saying why. */
static void unpark(host_reloader *r)
{
    host_session *hs = r->hs;
    size_t n = 0;
    char **files = NULL;
    size_t *in = NULL;
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *q = hs->plugins[i];
        if (q->status != HOST_PLUGIN_PARKED || !can_come_back(hs, q)) continue;
        char **v = realloc(files, (n + 1) * sizeof *v);
        size_t *f = v ? realloc(in, (n + 1) * sizeof *f) : NULL;
        if (v) files = v;
        if (f) in = f;
        if (!v || !f || !(v[n] = strdup(q->file))) break;
        in[n] = (size_t)q->folder;
        n++;
        host_info("reload", "plugin '%s' comes back: what it needs is there again", q->name);
    }
    for (size_t i = 0; i < n; i++) {
        apply(r, in[i], files[i], host_now_ns()); /* replaces the parked record */
        host_plugin *q = record_of(hs, in[i], files[i]);
        if (q && q->status == HOST_PLUGIN_PARKED) {
            host_warn("reload", "%s: plugin '%s' could not come back (see above): unloaded",
                      files[i], q->name);
            host_plugin_note(q, HOST_EVENT_UNLOAD,
                             "could not come back (the log says why): "
                             "unloaded");
            q->status = HOST_PLUGIN_UNLOADED;
        }
        free(files[i]);
    }
    free(files);
    free(in);
}

/* Keep file (of folder k), which settled, for the batch. False when memory ran out (then
 * it is applied at once, alone). */
static bool batch_add(host_reloader *r, size_t k, const char *file, uint64_t changed_at,
                      uint64_t now)
{
    if (r->batch_count == r->batch_cap) {
        size_t cap = r->batch_cap ? r->batch_cap * 2 : 8;
        settled *v = realloc(r->batch, cap * sizeof *v);
        if (!v) return false;
        r->batch = v;
        r->batch_cap = cap;
    }
    char *copy = strdup(file);
    if (!copy) return false;
    if (r->batch_count == 0) r->batch_since = now;
    r->batch[r->batch_count++] = (settled){k, copy, changed_at};
    return true;
}

/* Apply file of folder k, as one slice of the trace. */
static void apply_traced(host_reloader *r, size_t k, const char *file, uint64_t changed_at)
{
    uint64_t t0 = host_now_ns();
    apply(r, k, file, changed_at);
    char name[300];
    snprintf(name, sizeof name, "reload %s", file);
    host_world_trace_slice(r->hs->world, name, "reload", t0, host_now_ns());
}

/* Does the plugin of batch item a depend on the plugin of item b (declared, or an API it
 * uses)? Only what the running builds say: a new file's needs are unknown until it loads. */
static bool batch_depends(host_reloader *r, const settled *a, const settled *b)
{
    host_plugin *pa = record_of(r->hs, a->folder, a->file);
    host_plugin *pb = record_of(r->hs, b->folder, b->file);
    return pa && pb && pa != pb && host_plugin_depends_on(r->hs, pa, pb);
}

/* Apply the batch in dependency order: providers before the plugins that use them (a
 * build needing a provider's new API version then finds it); otherwise in the order the
 * files settled. */
static void apply_batch(host_reloader *r)
{
    size_t n = r->batch_count;
    while (n > 0) {
        size_t pick = 0; /* the first that depends on no other one left (any, in a cycle) */
        for (size_t i = 0; i < n; i++) {
            bool waits = false;
            for (size_t j = 0; j < n && !waits; j++)
                waits = batch_depends(r, &r->batch[i], &r->batch[j]);
            if (!waits) {
                pick = i;
                break;
            }
        }
        settled it = r->batch[pick];
        memmove(&r->batch[pick], &r->batch[pick + 1], (n - pick - 1) * sizeof *r->batch);
        r->batch_count = --n;
        apply_traced(r, it.folder, it.file, it.changed_at);
        free(it.file);
    }
}

/* Builds refused for want of an API (host_plugin_missing_api) whose API is published now
 * (a provider landed): tried again, once per time their API comes. */
static void retry_waiting(host_reloader *r)
{
    host_session *hs = r->hs;
    for (bool again = true; again;) { /* a retry may move the records: look again */
        again = false;
        for (size_t i = 0; i < hs->plugin_count && !again; i++) {
            host_plugin *q = hs->plugins[i];
            if (!q->missing_api[0] ||
                (q->status != HOST_PLUGIN_LOADED && q->status != HOST_PLUGIN_SKIPPED) ||
                !host_registry_find(&hs->registry, q->missing_api, q->missing_version, NULL))
                continue;
            host_info("reload",
                      "%s: API '%s' version %u is published now: its refused build is tried "
                      "again",
                      q->file, q->missing_api, q->missing_version);
            q->missing_api[0] = '\0'; /* set again only for an API that is not there */
            char *file = strdup(q->file);
            if (file) apply_traced(r, (size_t)q->folder, file, host_now_ns());
            free(file);
            again = true;
        }
    }
}

void host_reloader_poll(host_reloader *r)
{
    uint64_t now = host_now_ns();
    bool busy = false;
    for (size_t k = 0; k < r->folder_count; k++) {
        uint64_t changed_at = 0;
        const char *const *files = host_watch_poll(r->folders[k].watch, now, &changed_at);
        for (size_t i = 0; files[i]; i++)
            if (!batch_add(r, k, files[i], changed_at, now))
                apply_traced(r, k, files[i], changed_at);
        busy = busy || host_watch_busy(r->folders[k].watch);
    }
    if (r->batch_count && (!busy || now - r->batch_since >= HOLD_MAX_NS)) apply_batch(r);
    for (size_t k = 0; k < r->folder_count; k++) check_manifest(r, k, now);
    unpark(r);
    retry_waiting(r);
}

void host_reload_drop_crashed(host_session *hs)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        if (!p->crashed || p->status != HOST_PLUGIN_LOADED) continue;
        if (host_reload_rollback(hs, p)) continue; /* the last good version runs again */
        host_plugin_park_dependents(hs, p, "crashed");
        host_kept k = host_plugin_keep(hs, p); /* its save code may crash too: guarded */
        const char *kept = k == HOST_KEPT ? "; its components are kept and come back with its "
                                            "next build"
                           : k == HOST_KEPT_NONE ? "; it has no components to keep"
                                                 : "; its components could not be kept";
        host_warn("guard", "plugin '%s' unloaded after its crash%s", p->name, kept);
        host_plugin_note(p, HOST_EVENT_UNLOAD,
                         "unloaded after its crash (no good build to go "
                         "back to)%s",
                         kept);
        host_plugin_unload(hs, p, ECS_UNLOAD_SHUTDOWN); /* its unload() is not called */
        host_plugin_release(p);
        snprintf(p->reason, sizeof p->reason, "it crashed");
    }
}
