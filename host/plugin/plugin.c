/* SPDX-License-Identifier: MIT */
/* plugin.c: one plugin's life: its record, its states and the transitions between them
 * (plugin.h has the states and how a record moves between them).
 *
 * Opening: the file checked before anything maps it (plugin_file.h), copied into the
 * private folder under --watch, probed in a child (probe.h), dlopen RTLD_NOW | RTLD_LOCAL
 * and the entry call (under the crash guard with --safe), the description checked.
 * Loading: load() with registrations kept pending, then committed all at once or all taken
 * back. Unloading, releasing, parking dependents, dropping crashed plugins.
 */
#include "plugin.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "fs.h"
#include "plugin_desc.h"
#include "plugin_file.h"
#include "private.h"
#include "pstate.h"
#include "reload.h"
#include "scene.h"
#include "hostapi.h"
#include "loader.h"
#include "session.h"

#define PLUGIN_DESC_LAYOUT_SIZE (offsetof(ecs_plugin_desc, state_hash) + sizeof(uint32_t))

/* ---- plugin records ---- */

static void call_dlclose(void *dl)
{
    dlclose(dl);
}

int host_plugin_dlclose(void *dl, const char *name)
{
    host_guard_library_gone(dl);
    host_call c = {name, "its destructors (dlclose)", NULL};
    int sig = dl ? host_guard_call(&c, call_dlclose, dl) : 0;
    if (sig)
        host_error("guard",
                   "plugin '%s': its destructors crashed with %s at dlclose(): it stays "
                   "mapped",
                   name ? name : "?", host_signame(sig));
    return sig;
}

void host_plugin_release(host_plugin *p)
{
    host_plugin_dlclose(p->dl, p->name);
    p->dl = NULL;
    p->desc = NULL;
    if (p->copy_path) unlink(p->copy_path);
    free(p->copy_path);
    p->copy_path = NULL;
}

/* Mark p skipped as bad: one log line naming the file and the reason. */
void host_plugin_skip(host_session *hs, host_plugin *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reason, sizeof p->reason, fmt, ap);
    va_end(ap);
    p->status = HOST_PLUGIN_SKIPPED;
    hs->bad_plugins++;
    if (!hs->quiet_skips) host_error("loader", "%s: skipped: %s", p->path, p->reason);
    host_plugin_release(p);
}

static char **copy_list(const char *const *list)
{
    size_t n = 0;
    while (list && list[n]) n++;
    char **out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        if (!(out[i] = strdup(list[i]))) {
            for (size_t j = 0; j < i; j++) free(out[j]);
            free(out);
            return NULL;
        }
    }
    return out;
}

/* Free a list of found APIs. */
static void free_uses(host_api_use *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].name);
    free(v);
}

void host_plugin_free(host_plugin *p)
{
    if (!p) return;
    host_plugin_forget_previous(p);
    host_plugin_dlclose(p->dl, p->name);
    if (p->copy_path) unlink(p->copy_path);
    free(p->copy_path);
    for (char **d = p->deps; d && *d; d++) free(*d);
    for (size_t i = 0; i < p->api_count; i++) free(p->api_names[i]);
    free(p->api_names);
    free(p->collections);
    free(p->pending_entities);
    free_uses(p->uses, p->use_count);
    free(p->deps);
    free(p->name);
    free(p->version);
    free(p->path);
    free(p->file);
    cJSON_Delete(p->config);
    free(p);
}

void host_plugin_desc_layout(host_plugin *p, const ecs_plugin_desc *d)
{
    bool recorded = d->struct_size >= PLUGIN_DESC_LAYOUT_SIZE; /* ABI 1.1 */
    p->state_size = recorded ? d->state_size : 0;
    p->state_hash = recorded ? d->state_hash : 0;
}

/* A record for the plugin file at path, not opened yet. NULL: out of memory. */
host_plugin *host_plugin_new(host_session *hs, const char *path, const char *file)
{
    host_plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || !(p->file = strdup(file))) {
        if (p) free(p->path);
        free(p);
        return NULL;
    }
    p->session = hs;
    p->rank = INT_MAX;
    p->listed_at = -1;
    return p;
}

/* Copy path into the private folder under a unique name; the copy's path, or NULL with
 * the reason in why. dlopen() caches by path, and a build tool must be free to overwrite
 * the original: so the host never maps the build output itself. */
/* FNV-1a over buf[0..n), eight bytes a step (a build id, not a checksum: fast is enough). */
static uint64_t hash_bytes(uint64_t h, const unsigned char *buf, size_t n)
{
    size_t i = 0;
    for (uint64_t word; i + 8 <= n; i += 8) {
        memcpy(&word, buf + i, 8);
        h = (h ^ word) * 1099511628211ull;
    }
    for (; i < n; i++) h = (h ^ buf[i]) * 1099511628211ull;
    return h;
}

/* The build id of a file of mtime `when` and hash h into out (40 bytes). */
static void build_id(char out[40], time_t when, uint64_t h)
{
    struct tm tm;
    char at[16] = "?";
    if (localtime_r(&when, &tm)) strftime(at, sizeof at, "%H:%M:%S", &tm);
    snprintf(out, 40, "build of %s, %08x", at, (unsigned)(h ^ (h >> 32)));
}

static char *private_copy(host_session *hs, const char *path, const char *file, char *why,
                          size_t len, char build[40])
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char name[NAME_MAX + 16], dst[PATH_MAX];
    snprintf(name, sizeof name, "%u-%s", ++hs->copies, base);
    if (!host_private_ok(hs, why, len)) return NULL;          /* may make the folder again */
    snprintf(dst, sizeof dst, "%s/%s", hs->private_at, name); /* by the descriptor */
    int in = host_fs_open_regular(path, why, len);            /* never blocks on a FIFO */
    if (in < 0) return NULL;
    int out =
        openat(hs->private_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
    bool ok = out >= 0;
    unsigned char buf[65536];
    ssize_t n = 0;
    uint64_t h = 14695981039346656037ull;
    struct stat st;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) {
        ok = write(out, buf, (size_t)n) == n;
        h = hash_bytes(h, buf, (size_t)n);
    }
    ok = ok && n == 0;
    if (ok && fstat(in, &st) == 0) build_id(build, st.st_mtim.tv_sec, h);
    if (out >= 0 && close(out) != 0) ok = false;
    if (!ok) host_format(why, len, "cannot copy it to %s: %s", dst, strerror(errno));
    if (in >= 0) close(in);
    if (!ok && out >= 0) unlink(dst);
    return ok ? strdup(dst) : NULL;
}

/* dlopen and the entry call, each run under the crash guard with --safe. */
typedef struct open_call {
    const char *path;
    void *dl;
    union {
        void *obj;
        ecs_plugin_entry_fn fn;
    } entry;
    const ecs_plugin_desc *desc;
} open_call;

static void call_dlopen(void *arg)
{
    open_call *c = arg;
    c->dl = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
}

static void call_entry(void *arg)
{
    open_call *c = arg;
    c->desc = c->entry.fn();
}

/* Open path and read its description. The record is returned even when the plugin is
 * bad (status SKIPPED, with the reason), so --list can show it. NULL: out of memory. */
host_plugin *host_plugin_open(host_session *hs, const char *path, const char *file)
{
    host_plugin *p = host_plugin_new(hs, path, file);
    if (!p) return NULL;
    char why[400];
    if (!host_elf_check_path(path, why, sizeof why)) { /* before anything maps it */
        host_plugin_skip(hs, p, "%s", why);
        return p;
    }
    if (hs->private_dir &&
        !(p->copy_path = private_copy(hs, path, file, why, sizeof why, p->build))) {
        host_plugin_skip(hs, p, "%s", why);
        return p;
    }
    const char *map = p->copy_path ? p->copy_path : path;
    if (p->copy_path && !host_elf_check_path(map, why, sizeof why)) { /* the bytes mapped */
        host_plugin_skip(hs, p, "%s", why);
        return p;
    }
    if (!host_probe_file(&hs->probe, map, NULL, why, sizeof why)) { /* before it is mapped */
        host_plugin_skip(hs, p, "%s", why);
        return p;
    }
    open_call oc = {map, NULL, {NULL}, NULL};
    host_call named = {p->file, "its constructors (dlopen)", NULL};
    int sig = host_guard_call(&named, call_dlopen, &oc); /* --safe: what the probe missed */
    if (sig) {
        host_plugin_skip(
            hs, p,
            "its constructor crashed with %s in the host (the probe had passed): it stays "
            "mapped, as dlopen left it",
            host_signame(sig));
        return p;
    }
    if (!(p->dl = oc.dl)) {
        host_plugin_skip(hs, p, "dlopen failed: %s", dlerror());
        return p;
    }
    oc.entry.obj = dlsym(p->dl, ECS_PLUGIN_ENTRY_NAME);
    if (!oc.entry.obj) {
        host_plugin_skip(hs, p, "no entry symbol '%s': declare it with ECS_PLUGIN_EXPORT()",
                         ECS_PLUGIN_ENTRY_NAME);
        return p;
    }
    named.what = ECS_PLUGIN_ENTRY_NAME "()";
    if ((sig = host_guard_call(&named, call_entry, &oc))) {
        p->dl = NULL; /* its code may hold a lock or a half-made state: never closed */
        host_plugin_skip(
            hs, p, "its entry function %s() crashed with %s in the host (the probe had passed)",
            ECS_PLUGIN_ENTRY_NAME, host_signame(sig));
        return p;
    }
    const ecs_plugin_desc *d = oc.desc;
    if (!host_plugin_desc_ok(d, why, sizeof why)) {
        host_plugin_skip(hs, p, "%s", why);
        return p;
    }
    p->desc = d;
    host_guard_library(p->dl, d->name); /* a crash in its code names it */
    p->abi_major = d->abi_major;
    p->abi_minor = d->abi_minor;
    p->state_version = d->state_version;
    host_plugin_desc_layout(p, d);
    p->name = strdup(d->name);
    p->version = strdup(d->version ? d->version : "");
    p->deps = copy_list(d->dependencies);
    if (!p->name || !p->version || !p->deps) host_plugin_skip(hs, p, "out of memory");
    return p;
}

/* ---- loading ---- */

/* The entities a refused load() created: destroyed, and the managers told. */
static void destroy_pending_entities(host_plugin *p)
{
    uint32_t gone = 0;
    if (p->pending_entity_count)
        host_entity_destroy_many(p->session->world->entities, p->pending_entities,
                                 (uint32_t)p->pending_entity_count, &gone);
    if (gone) {
        host_detail("loader", "%s: destroyed the %u entities its refused load() created",
                    p->name ? p->name : p->file, gone);
        host_world_announce_destroyed(p->session->world);
    }
    free(p->pending_entities);
    p->pending_entities = NULL;
    p->pending_entity_count = p->pending_entity_cap = 0;
}

void host_plugin_discard_pending(host_plugin *p)
{
    destroy_pending_entities(p);
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        free(p->pending_managers[i]->name);
        free(p->pending_managers[i]);
    }
    for (size_t i = 0; i < p->pending_api_count; i++) {
        free(p->pending_apis[i].name);
        free(p->pending_apis[i].bytes);
    }
    for (size_t i = 0; i < p->pending_system_count; i++) host_system_free(p->pending_systems[i]);
    free(p->pending_managers);
    free(p->pending_apis);
    free(p->pending_systems);
    free(p->pending_collections); /* no reference was taken yet */
    p->pending_managers = NULL;
    p->pending_apis = NULL;
    p->pending_systems = NULL;
    p->pending_collections = NULL;
    p->pending_manager_count = p->pending_api_count = 0;
    p->pending_system_count = p->pending_collection_count = 0;
    p->has_pending_pstate = false;
}

typedef struct unload_call {
    host_plugin *p;
    const ecs_plugin_desc *desc;
    void *state;
    ecs_unload_reason why;
} unload_call;

static void call_unload(void *arg)
{
    unload_call *c = arg;
    c->desc->unload(&c->p->table, c->state, c->why);
}

int host_plugin_call_unload(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                            ecs_unload_reason why)
{
    if (!desc || !desc->unload) return 0;
    bool was = p->in_unload;
    p->in_unload = true;
    unload_call c = {p, desc, state, why};
    host_call named = {p->name, "unload()", NULL};
    int sig = host_guard_call(&named, call_unload, &c);
    p->in_unload = was;
    if (sig)
        host_error("guard", "plugin '%s' (%s) crashed with %s in unload()", p->name, p->file,
                   host_signame(sig));
    return sig;
}

typedef struct outcome_call {
    host_plugin *p;
    void (*fn)(const ecs_host *h, void *arg, bool accepted);
    void *arg;
    bool accepted;
} outcome_call;

static void call_outcome(void *arg)
{
    outcome_call *c = arg;
    c->fn(&c->p->table, c->arg, c->accepted);
}

void host_plugin_begin_load(host_plugin *p)
{
    p->in_load = true;
    p->registration_failed = false;
    p->missing_api[0] = '\0';
}

bool host_plugin_missing_api(const host_session *hs, const host_plugin *p, char *buf, size_t len)
{
    *buf = '\0';
    if (!p->missing_api[0]) return false;
    const host_api_entry *e = host_registry_entry(&hs->registry, p->missing_api);
    const host_plugin *owner = e ? e->owner : NULL;
    char has[160] = "no plugin publishes it";
    if (owner)
        host_format(has, sizeof has, "plugin '%s' publishes version %u", owner->name, e->version);
    host_format(buf, len, "it asked api_find for API '%s' version %u or later; %s", p->missing_api,
                p->missing_version, has);
    return true;
}

int host_plugin_outcome(host_plugin *p, bool accepted)
{
    outcome_call c = {p, p->commit_fn, p->commit_arg, accepted};
    p->commit_fn = NULL;
    p->commit_arg = NULL;
    host_call named = {p->name, "the function it gave on_commit", NULL};
    int sig = c.fn ? host_guard_call(&named, call_outcome, &c) : 0;
    if (sig && accepted)
        host_plugin_crashed(p, sig, "the function it gave on_commit");
    else if (sig)
        host_warn("loader", "%s: its on_commit function %s hearing of its refusal",
                  p->name ? p->name : p->file, host_signame_outcome(sig));
    return sig;
}

void host_plugin_undo_load(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                           ecs_unload_reason why)
{
    if (host_plugin_outcome(p, false) == 0) host_plugin_call_unload(p, desc, state, why);
}

/* Room in hs for p's pending managers and systems, and their steps. ECS_ERR_NO_MEMORY
 * changes nothing the frame reads. */
ecs_status host_plugin_reserve_for(host_session *hs, const host_plugin *p)
{
    size_t need = hs->world->manager_count + p->pending_manager_count;
    if (need > hs->world->manager_cap) {
        host_manager **v = realloc(hs->world->managers, need * 2 * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        hs->world->managers = v;
        hs->world->manager_cap = need * 2;
    }
    size_t systems = hs->world->system_count + p->pending_system_count;
    if (systems > hs->world->system_cap) {
        host_system **v = realloc(hs->world->systems, systems * 2 * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        hs->world->systems = v;
        hs->world->system_cap = systems * 2;
    }
    return host_schedule_reserve(hs->world, need + systems);
}

/* Take p's pending collection references (they become its own). */
static void commit_collections(host_session *hs, host_plugin *p)
{
    for (size_t i = 0; i < p->pending_collection_count; i++)
        host_collections_ref(&hs->world->collections, &hs->world->sig, p->pending_collections[i]);
    free(p->collections);
    p->collections = p->pending_collections;
    p->collection_count = p->pending_collection_count;
    p->pending_collections = NULL;
    p->pending_collection_count = 0;
}

/* Drop every collection reference p holds. */
static void release_collections(host_session *hs, host_plugin *p)
{
    for (size_t i = 0; i < p->collection_count; i++)
        host_collections_unref(&hs->world->collections, &hs->world->sig, p->collections[i]);
    free(p->collections);
    p->collections = NULL;
    p->collection_count = 0;
}

bool host_plugin_apis_fit(host_session *hs, const host_plugin *p, char *why, size_t len)
{
    for (size_t i = 0; i < p->pending_api_count; i++) {
        const host_pending_api *a = &p->pending_apis[i];
        size_t room = 0;
        ecs_status s = host_registry_check(&hs->registry, p, a->name, a->size, &room);
        if (s == ECS_ERR_BAD_VALUE)
            return host_format(why, len,
                               "API '%s' is %zu bytes, more than the %zu the host keeps for it "
                               "(its storage never moves, so the pointers plugins hold stay "
                               "valid): publish the larger one under a new name",
                               a->name, a->size, room),
                   false;
        if (s != ECS_OK)
            return host_format(why, len, "API '%s': %s", a->name, ecs_status_text(s)), false;
    }
    return true;
}

/* Move p's pending registrations into the world. All or nothing: on failure nothing of it
 * is published, with the reason in p->reason. */
static ecs_status commit(host_session *hs, host_plugin *p)
{
    char why[sizeof p->reason];
    if (!host_plugin_apis_fit(hs, p, why, sizeof why)) {
        host_format(p->reason, sizeof p->reason, "registering failed: %s", why);
        return ECS_ERR_BAD_VALUE;
    }
    if (host_plugin_reserve_for(hs, p) != ECS_OK) return ECS_ERR_NO_MEMORY;
    char **names = calloc(p->pending_api_count + 1, sizeof *names);
    if (!names) return ECS_ERR_NO_MEMORY;
    for (size_t i = 0; i < p->pending_api_count; i++) {
        host_pending_api *a = &p->pending_apis[i];
        ecs_status s =
            host_registry_publish(&hs->registry, p, a->name, a->version, a->bytes, a->size);
        if (s != ECS_OK) { /* memory for a new name: take back what went out */
            host_registry_withdraw(&hs->registry, p);
            for (size_t j = 0; j < i; j++) p->pending_apis[j].name = names[j];
            free(names);
            return s;
        }
        names[i] = a->name; /* ownership moves to api_names */
        a->name = NULL;
    }
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        hs->world->managers[hs->world->manager_count++] = p->pending_managers[i];
        p->pending_managers[i] = NULL;
    }
    p->manager_count = p->pending_manager_count;
    p->pending_manager_count = 0;
    for (size_t i = 0; i < p->pending_system_count; i++) {
        hs->world->systems[hs->world->system_count++] = p->pending_systems[i];
        p->pending_systems[i] = NULL;
    }
    p->system_count = p->pending_system_count;
    p->pending_system_count = 0;
    commit_collections(hs, p);
    p->pstate = p->pending_pstate;
    p->has_pstate = p->has_pending_pstate;
    p->api_names = names;
    p->api_count = p->pending_api_count;
    p->pending_entity_count = 0; /* the load stands: its entities stay */
    host_plugin_discard_pending(p);
    host_world_managers_changed(hs->world);
    return ECS_OK;
}

static void release_memory(host_plugin *p, const char *when)
{
    if (p->mem.bytes == 0) return;
    host_warn(p->name, "leaked %zu bytes in %zu allocations %s: freed by the host", p->mem.bytes,
              p->mem.blocks, when);
    host_mem_release_all(&p->mem);
}

typedef struct load_call {
    host_plugin *p;
    const ecs_load_args *args;
    ecs_status status;
} load_call;

static void call_load(void *arg)
{
    load_call *c = arg;
    c->status = c->p->desc->load(&c->p->table, c->args, &c->p->state);
}

ecs_status host_plugin_load(host_session *hs, host_plugin *p)
{
    host_api_init(p);
    ecs_load_args args = {sizeof args, NULL};
    host_plugin_begin_load(p);
    load_call lc = {p, &args, ECS_OK};
    host_call named = {p->name, "load()", NULL};
    int sig = host_guard_call(&named, call_load, &lc);
    ecs_status s = sig ? ECS_ERR_PLUGIN : lc.status;
    p->in_load = false;
    if (sig) { /* its state is unknown: do not call it again, take back what it holds */
        host_format(p->reason, sizeof p->reason, "load() %s", host_signame_outcome(sig));
        p->commit_fn = NULL;
        host_plugin_discard_pending(p);
        host_mem_release_all(&p->mem);
        return s;
    }
    char refusal[sizeof p->reason];
    snprintf(refusal, sizeof refusal, "%s", p->registration_failed ? p->reason : "");
    if (s == ECS_OK && p->registration_failed) {
        host_plugin_undo_load(p, p->desc, p->state, ECS_UNLOAD_SHUTDOWN);
        s = ECS_ERR_PLUGIN;
        host_format(p->reason, sizeof p->reason, "load() went on after a refused registration: %s",
                    refusal);
    } else if (s == ECS_OK && (p->reason[0] = '\0', s = commit(hs, p)) != ECS_OK) {
        host_plugin_undo_load(p, p->desc, p->state, ECS_UNLOAD_SHUTDOWN);
        if (!p->reason[0])
            snprintf(p->reason, sizeof p->reason, "registering failed: %s", ecs_status_text(s));
    } else if (s != ECS_OK) {
        char missing[300];
        host_plugin_missing_api(hs, p, missing, sizeof missing);
        host_format(p->reason, sizeof p->reason, "load() failed: %s%s%s%s%s", ecs_status_text(s),
                    *refusal ? " after " : "", refusal, *missing ? ": " : "", missing);
    }
    if (s != ECS_OK) {
        p->commit_fn = NULL; /* a load() that failed hears nothing: it cleaned up itself */
        host_plugin_discard_pending(p);
        release_memory(p, "after its failed load");
        return s;
    }
    if (p->manager_count == 0 && p->api_count == 0)
        host_warn("loader",
                  "%s: plugin '%s' loaded but registered no manager and published no "
                  "API",
                  p->path, p->name);
    if (p->state && p->desc->struct_size >= PLUGIN_DESC_LAYOUT_SIZE && !p->state_size)
        host_warn("loader",
                  "%s: plugin '%s' keeps a state but records no layout of it: a reload that "
                  "changes the state struct without bumping state_version cannot be caught "
                  "(fill state_size and state_hash with ECS_STATE_LAYOUT(type, fields...))",
                  p->path, p->name);
    p->status = HOST_PLUGIN_LOADED;
    char systems[48] = "";
    if (p->system_count) snprintf(systems, sizeof systems, ", %zu systems", p->system_count);
    host_info("loader", "loaded %s %s from %s (%zu managers, %zu APIs%s)", p->name, p->version,
              p->file, p->manager_count, p->api_count, systems);
    p->missing_api[0] = '\0';     /* it loaded: what it did not find was optional */
    host_plugin_outcome(p, true); /* a crash in it: dropped at the end of the frame */
    return ECS_OK;
}

void host_plugin_unload(host_session *hs, host_plugin *p, ecs_unload_reason why)
{
    if (p->status != HOST_PLUGIN_LOADED) return;
    if (!p->crashed && host_plugin_call_unload(p, p->desc, p->state, why) != 0)
        p->crashed = true; /* its memory is the host's to free, as after any crash */
    size_t kept = 0;
    for (size_t i = 0; i < hs->world->manager_count; i++) {
        host_manager *m = hs->world->managers[i];
        if (m->owner != p)
            hs->world->managers[kept++] = m; /* the others keep their order */
        else {
            host_sig_clear_bit(&hs->world->sig, m->bit); /* its components are gone */
            free(m->name);
            free(m);
        }
    }
    hs->world->manager_count = kept;
    p->manager_count = 0;
    kept = 0;
    for (size_t i = 0; i < hs->world->system_count; i++) {
        if (hs->world->systems[i]->owner != p)
            hs->world->systems[kept++] = hs->world->systems[i];
        else
            host_system_free(hs->world->systems[i]);
    }
    hs->world->system_count = kept;
    p->system_count = 0;
    release_collections(hs, p);
    p->has_pstate = false;
    host_world_managers_changed(hs->world); /* smaller: no memory needed */
    host_registry_withdraw(&hs->registry, p);
    for (size_t i = 0; i < p->api_count; i++) free(p->api_names[i]);
    free(p->api_names); /* a load of the same record publishes them again */
    p->api_names = NULL;
    p->api_count = 0;
    if (p->crashed && p->mem.bytes) { /* not a leak: it never had the chance to free it */
        host_info(p->name,
                  "the host freed the %zu bytes in %zu allocations the plugin held when it "
                  "crashed (its unload() is not called after a crash)",
                  p->mem.bytes, p->mem.blocks);
        host_mem_release_all(&p->mem);
    }
    release_memory(p, "at unload");
    p->state = NULL;
    p->status = HOST_PLUGIN_UNLOADED;
}

int host_plugin_push(host_session *hs, host_plugin *p)
{
    if (hs->plugin_count == hs->plugin_cap) {
        size_t cap = hs->plugin_cap ? hs->plugin_cap * 2 : 16;
        host_plugin **v = realloc(hs->plugins, cap * sizeof *v);
        if (!v) return -1;
        hs->plugins = v;
        hs->plugin_cap = cap;
    }
    hs->plugins[hs->plugin_count++] = p;
    return 0;
}

host_plugin *host_plugin_named(host_session *hs, const char *name)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        if (p->status == HOST_PLUGIN_LOADED && strcmp(p->name, name) == 0) return p;
    }
    return NULL;
}

/* ---- --safe: plugins whose code crashed ---- */

void host_plugin_note(host_plugin *p, host_event kind, const char *fmt, ...)
{
    struct host_reload_note *n = &p->reloads[p->reload_count++ % HOST_HISTORY];
    n->time = p->session ? p->session->world->frame.time : 0;
    n->done = kind == HOST_EVENT_RELOAD || kind == HOST_EVENT_BACK;
    n->kind = (uint8_t)kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->what, sizeof n->what, fmt, ap);
    va_end(ap);
}

void host_plugin_crashed(host_plugin *p, int sig, const char *what)
{
    if (p->crashed) return;
    p->crashed = true;
    static const char after[] = "at the end of this frame it goes back to its last good "
                                "version, or is unloaded until a new build";
    const char *signal = host_signame(sig);
    if (host_signame_is_stop(sig)) { /* main.c: the second SIGINT/SIGTERM */
        host_error("guard",
                   "plugin '%s' (%s) did not return from %s and was abandoned at the "
                   "second %s: %s",
                   p->name, p->file, what, signal, after);
        host_plugin_note(p, HOST_EVENT_CRASH, "%s %s did not return from %s: abandoned at the %s",
                         p->name, p->version, what, signal);
    } else {
        host_error("guard", "plugin '%s' (%s) crashed with %s in %s: %s", p->name, p->file, signal,
                   what, after);
        host_plugin_note(p, HOST_EVENT_CRASH, "%s %s crashed with %s in %s", p->name, p->version,
                         signal, what);
    }
}

typedef struct keep_call {
    host_session *hs;
    host_plugin *p;
    bool kept;
} keep_call;

static void call_keep(void *arg)
{
    keep_call *c = arg;
    c->kept = host_scene_keep_owner(c->hs->scene, c->p);
}

/* ---- the dependency graph: declared dependencies and found APIs ---- */

/* The position of loaded plugin p in hs->plugins, or -1. */
static long position_of(const host_session *hs, const host_plugin *p)
{
    for (size_t i = 0; p && i < hs->plugin_count; i++)
        if (hs->plugins[i] == p && p->status == HOST_PLUGIN_LOADED) return (long)i;
    return -1;
}

/* The loaded plugin behind q's k-th dependency edge (its declared dependencies, then the
 * providers of the APIs it found), NULL when that one is not loaded; *more false past the
 * last edge. */
static host_plugin *provider_at(host_session *hs, const host_plugin *q, size_t k, bool *more)
{
    size_t declared = 0;
    while (q->deps && q->deps[declared]) declared++;
    *more = k < declared + q->use_count;
    if (!*more) return NULL;
    if (k < declared) return host_plugin_named(hs, q->deps[k]);
    const host_api_entry *e = host_registry_entry(&hs->registry, q->uses[k - declared].name);
    return e && e->owner != q ? (host_plugin *)e->owner : NULL;
}

/* A chain of dependencies from loaded plugin `from` to `to` (from needs x, x needs ...
 * needs to), breadth first with one visit per plugin whatever the graph holds: true with
 * "from needs x, x needs to" in chain. False when there is none or memory ran out. */
static bool dependency_chain(host_session *hs, host_plugin *from, const host_plugin *to,
                             char *chain, size_t len)
{
    size_t n = hs->plugin_count, head = 0, tail = 0;
    long *parent = malloc((n + 1) * sizeof *parent), *queue = malloc((n + 1) * sizeof *queue);
    long start = position_of(hs, from), found = -1;
    for (size_t i = 0; parent && queue && i < n; i++) parent[i] = -2; /* -2: not seen yet */
    if (parent && queue && start >= 0) parent[start] = -1, queue[tail++] = start;
    while (head < tail && found < 0) {
        host_plugin *q = hs->plugins[queue[head++]];
        bool more = true;
        for (size_t k = 0; more && found < 0; k++) {
            long at = position_of(hs, provider_at(hs, q, k, &more));
            if (at < 0 || parent[at] != -2) continue;
            parent[at] = queue[head - 1];
            if (hs->plugins[at] == to)
                found = at;
            else
                queue[tail++] = at;
        }
    }
    size_t used = 0; /* walk back from `to`, then write the links from the front */
    long hops[64], count = 0;
    for (long at = found; at >= 0 && count < 64; at = parent[at]) hops[count++] = at;
    for (long i = count - 1; i > 0 && used < len; i--)
        used += (size_t)snprintf(chain + used, len - used, "%s%s needs %s", used ? ", " : "",
                                 hs->plugins[hops[i]]->name, hs->plugins[hops[i - 1]]->name);
    free(parent);
    free(queue);
    return found >= 0;
}

/* Does x (a provider p would need) need p, directly or not? The cycle in why. */
static bool cycle_through(host_session *hs, const host_plugin *p, host_plugin *x, char *why,
                          size_t len)
{
    char chain[400];
    if (x == p) return host_format(why, len, "%s needs %s", p->name, p->name), true;
    if (!x || !dependency_chain(hs, x, p, chain, sizeof chain)) return false;
    host_format(why, len, "%s needs %s, %s", p->name, x->name, chain);
    return true;
}

bool host_plugin_closes_cycle(host_session *hs, const host_plugin *p, char *const *deps,
                              const host_api_use *uses, size_t use_count, char *why, size_t len)
{
    for (char *const *d = deps; d && *d; d++)
        if (cycle_through(hs, p, host_plugin_named(hs, *d), why, len)) return true;
    for (size_t i = 0; i < use_count; i++) {
        const host_api_entry *e = host_registry_entry(&hs->registry, uses[i].name);
        if (e && e->owner != p && cycle_through(hs, p, (host_plugin *)e->owner, why, len))
            return true;
    }
    return false;
}

void host_plugin_keep_uses(host_plugin *p, bool swapped, host_api_use *old, size_t old_count)
{
    if (swapped) {
        free_uses(old, old_count);
        return;
    }
    free_uses(p->uses, p->use_count);
    p->uses = old;
    p->use_count = old_count;
}

typedef struct pstate_call {
    const ecs_plugin_state_desc *d;
    const char *text; /* read: the value's text; write: out */
    size_t len, at, err_at;
    char *out;
    ecs_status status;
    char why[300];
} pstate_call;

static void call_pstate_write(void *arg)
{
    pstate_call *c = arg;
    c->out = host_pstate_write(c->d, &c->len, c->why, sizeof c->why);
}

static void call_pstate_read(void *arg)
{
    pstate_call *c = arg;
    c->status = host_pstate_read(c->d, c->text, c->len, c->at, &c->err_at, c->why, sizeof c->why);
}

char *host_plugin_state_text(host_plugin *p, size_t *len, char *why, size_t whylen)
{
    *why = '\0';
    if (!p->has_pstate) return NULL;
    pstate_call c = {.d = &p->pstate};
    host_call named = {p->name, "write of its plugin state", NULL};
    int sig = host_guard_call(&named, call_pstate_write, &c);
    if (sig) {
        free(c.out);
        host_format(why, whylen, "its write %s", host_signame_outcome(sig));
        return NULL;
    }
    if (!c.out) host_format(why, whylen, "its write failed: %s", c.why);
    *len = c.len;
    return c.out;
}

ecs_status host_plugin_state_read(host_plugin *p, const ecs_plugin_state_desc *d, const char *text,
                                  size_t len, size_t at, size_t *err_at, int *sig, char *why,
                                  size_t whylen)
{
    pstate_call c = {.d = d, .text = text, .len = len, .at = at, .err_at = at};
    host_call named = {p->name, "read of its plugin state", NULL};
    int crashed = host_guard_call(&named, call_pstate_read, &c);
    if (sig) *sig = crashed;
    *err_at = c.err_at;
    if (crashed) {
        host_format(why, whylen, "its read %s", host_signame_outcome(crashed));
        return ECS_ERR_PLUGIN;
    }
    if (c.status != ECS_OK) host_format(why, whylen, "%s", c.why);
    return c.status;
}

/* Keep p's own state (it goes away) in the scene store, for when it comes back. */
static void keep_state(host_session *hs, host_plugin *p)
{
    char why[400];
    size_t len = 0;
    char *text = host_plugin_state_text(p, &len, why, sizeof why);
    if (text && !host_scene_keep_state(hs->scene, p->name, text, len))
        host_format(why, sizeof why, "out of memory");
    else if (text)
        *why = '\0';
    if (*why) host_warn("loader", "%s: its plugin state could not be kept: %s", p->name, why);
    free(text);
}

bool host_plugin_restore_state(host_session *hs, host_plugin *p)
{
    size_t len = 0, err_at = 0;
    char *text = host_scene_take_state(hs->scene, p->name, &len);
    if (!text) return true;
    char why[400];
    ecs_status s = ECS_ERR_UNSUPPORTED;
    if (p->has_pstate)
        s = host_plugin_state_read(p, &p->pstate, text, len, 0, &err_at, NULL, why, sizeof why);
    if (s != ECS_OK) {
        if (p->has_pstate)
            host_warn("loader",
                      "%s: its kept plugin state could not be read back (%s): it stays kept",
                      p->name, why);
        host_scene_keep_state(hs->scene, p->name, text,
                              len); /* written on save, read by a next build */
    }
    free(text);
    return s == ECS_OK;
}

host_kept host_plugin_keep(host_session *hs, host_plugin *p)
{
    keep_state(hs, p); /* beside its components, kept whatever becomes of them */
    bool none = true;  /* until a manager holds one (or may: it cannot count, but save) */
    for (size_t i = 0; i < hs->world->manager_count && none; i++) {
        const host_manager *m = hs->world->managers[i];
        uint32_t n = 0;
        if (m->owner != p) continue;
        if (m->desc.count ? host_manager_count_guarded(hs->world, m, &n) != 0 || n > 0
                          : host_manager_saves(m))
            none = false;
    }
    if (none) return HOST_KEPT_NONE;
    keep_call c = {hs, p, false};
    if (host_guard_run(call_keep, &c) != 0) c.kept = false;
    return c.kept ? HOST_KEPT : HOST_KEPT_LOST;
}

bool host_plugin_depends_on(const host_session *hs, const host_plugin *q, const host_plugin *p)
{
    if (q == p || q->status != HOST_PLUGIN_LOADED || !p->name) return false;
    for (char **d = q->deps; d && *d; d++)
        if (strcmp(*d, p->name) == 0) return true;
    for (size_t i = 0; i < q->use_count; i++) {
        const host_api_entry *e = host_registry_entry(&hs->registry, q->uses[i].name);
        if (e && e->owner == p) return true;
    }
    return false;
}

/* Park q (a loaded dependent of the plugin that goes): its components kept as JSON, its
 * unload() called, its file closed. `needs` says what it depends on and why that goes. */
static void park(host_session *hs, host_plugin *q, const char *needs, const char *root)
{
    host_kept kept = host_plugin_keep(hs, q);
    const char *what = kept == HOST_KEPT        ? "its components are kept"
                       : kept == HOST_KEPT_NONE ? "it has no components to keep"
                                                : "its components could not be kept";
    host_warn("loader", "plugin '%s' parked: it depends on %s; %s%s%s%s", q->name, needs, what,
              kept != HOST_KEPT_LOST ? ", and it comes back when '" : "",
              kept != HOST_KEPT_LOST ? root : "", kept != HOST_KEPT_LOST ? "' does" : "");
    host_plugin_note(q, HOST_EVENT_PARK, "parked: it depends on %s; %s", needs, what);
    host_plugin_unload(hs, q, ECS_UNLOAD_SHUTDOWN);
    host_plugin_forget_previous(q);
    host_plugin_release(q);
    host_format(q->reason, sizeof q->reason, "parked: it needs plugin '%s'", root);
    q->status = HOST_PLUGIN_PARKED;
}

/* Mark in via[] every loaded plugin that depends on hs->plugins[from], directly or not:
 * via[i] is the position of the plugin it was found to depend on (from for the direct
 * ones). Breadth first, each plugin visited once (NOT_SEEN before), whatever the graph
 * holds: a cycle made by a lazy api_find ends the walk like any other seen plugin. */
#define NOT_SEEN (-2L)
static void mark_dependents(host_session *hs, size_t from, long *via, long *queue)
{
    size_t head = 0, tail = 0;
    queue[tail++] = (long)from;
    while (head < tail) {
        host_plugin *x = hs->plugins[queue[head]];
        for (size_t i = 0; i < hs->plugin_count; i++) {
            if (via[i] != NOT_SEEN || !host_plugin_depends_on(hs, hs->plugins[i], x)) continue;
            via[i] = queue[head];
            queue[tail++] = (long)i;
        }
        head++;
    }
}

/* The marked plugin to park next: a loaded one that no other loaded marked plugin depends
 * on (dependents of dependents first); on a cycle, the one loaded last. -1 when none. */
static long next_to_park(host_session *hs, const long *via, size_t from)
{
    long last = -1;
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *q = hs->plugins[i];
        if (i == from || via[i] == NOT_SEEN || q->status != HOST_PLUGIN_LOADED) continue;
        bool needed = false;
        for (size_t j = 0; j < hs->plugin_count && !needed; j++)
            needed =
                j != from && via[j] != NOT_SEEN && host_plugin_depends_on(hs, hs->plugins[j], q);
        if (!needed) return (long)i;
        last = (long)i;
    }
    return last;
}

void host_plugin_park_dependents(host_session *hs, host_plugin *p, const char *why)
{
    size_t n = hs->plugin_count, from = 0;
    long *via = malloc((n + 1) * sizeof *via), *queue = malloc((n + 1) * sizeof *queue);
    while (from < n && hs->plugins[from] != p) from++;
    if (!via || !queue || from == n) {
        if (from < n) host_error("loader", "out of memory: the dependents of '%s' stay", p->name);
        free(via);
        free(queue);
        return;
    }
    for (size_t i = 0; i < n; i++) via[i] = NOT_SEEN;
    via[from] = (long)from;
    mark_dependents(hs, from, via, queue);
    for (long q; (q = next_to_park(hs, via, from)) >= 0;) {
        char needs[600];
        size_t used = 0;
        for (long at = via[q]; used < sizeof needs; at = via[at]) { /* the chain down to p */
            used += (size_t)snprintf(needs + used, sizeof needs - used, "plugin '%s', which ",
                                     hs->plugins[at]->name);
            if ((size_t)at == from) break;
            used += (size_t)snprintf(needs + used, sizeof needs - used, "depends on ");
        }
        if (used < sizeof needs) snprintf(needs + used, sizeof needs - used, "%s", why);
        park(hs, hs->plugins[q], needs, p->name);
    }
    free(via);
    free(queue);
}
#undef NOT_SEEN

/* Close a version of p: dlclose, check with RTLD_NOLOAD that it is really gone, delete
 * its private copy. */
void host_plugin_close_version(host_plugin *p, void *dl, char *copy)
{
    host_plugin_dlclose(dl, p->name); /* --safe: its destructors run under the guard */
    void *still = copy ? dlopen(copy, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (still) { /* something pins it: C++ unique symbols, TLS destructors, ... */
        host_warn("reload",
                  "%s: an old version is still mapped after dlclose (a unique or "
                  "thread-local symbol pins it): build plugins with -fno-gnu-unique and no "
                  "thread_local destructors",
                  p->name);
        dlclose(still);
    }
    if (copy) unlink(copy);
    free(copy);
}

void host_plugin_forget_previous(host_plugin *p)
{
    if (!p->prev_dl) return;
    host_plugin_close_version(p, p->prev_dl, p->prev_copy);
    free(p->prev_version);
    p->prev_dl = NULL;
    p->prev_desc = NULL;
    p->prev_copy = p->prev_version = NULL;
    p->prev_build[0] = '\0';
}
