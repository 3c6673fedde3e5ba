/* SPDX-License-Identifier: MIT */
/* snapshot.c: snapshots of a running session (snapshot.h): which parts a world has, taking
 * them into one container (snapfmt.h), checking a container against the loaded managers,
 * restoring it, and the files of --snapshot and --restore.
 *
 * Parts, in container order: "core" (the world core: snapshot_core.h); one per manager,
 * named after it: its snapshot_write bytes (kind BINARY, version = its snapshot_version) or,
 * for a manager that offers none, its components as a captured scene document (kind JSON:
 * u32 n, the n entity ids, the document text); one per plugin with a plugin state (kind
 * PSTATE, its JSON); "scene" (kind KEPT: the scene store's bytes). A JSON part costs what
 * a reload's migration costs; a BINARY one a memcpy.
 */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "scene.h"
#include "snapfmt.h"
#include "snapshot_core.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

/* One part being taken: its section, and the bytes made for it beforehand (JSON, plugin
 * state, scene store: malloc'd) or NULL (core and BINARY parts write in place). */
typedef struct part {
    host_snap_section sec;
    char *owned;
    host_manager *m;
} part;

static host_core_view core_of(host_session *hs)
{
    return (host_core_view){hs->world->entities, &hs->world->sig, &hs->world->frame,
                            &hs->world->seed};
}

/* ---- calls into managers, under the crash guard ---- */

typedef struct snap_call {
    const host_manager *m;
    void *buf;
    size_t size;
    ecs_status s;
} snap_call;

static void call_size(void *arg)
{
    snap_call *c = arg;
    c->size = c->m->desc.snapshot_size(c->m->desc.state);
}

static void call_write(void *arg)
{
    snap_call *c = arg;
    c->s = c->m->desc.snapshot_write(c->m->desc.state, c->buf, c->size);
}

static void call_read(void *arg)
{
    snap_call *c = arg;
    c->s = c->m->desc.snapshot_read(c->m->desc.state, c->buf, c->size);
}

/* fn on c as manager m's callback `what`; its status, ECS_ERR_PLUGIN when it crashed (then
 * said in why). */
static ecs_status guarded(host_manager *m, const char *what, void (*fn)(void *), snap_call *c,
                          char *why, size_t len)
{
    host_call named = {host_owner_plugin(m->owner)->name, what, m->name};
    int sig = host_guard_call(&named, fn, c);
    if (!sig) return c->s;
    host_format(why, len, "manager '%s': its %s %s", m->name, what, host_signame_outcome(sig));
    host_plugin_crashed(m->owner, sig, what);
    return ECS_ERR_PLUGIN;
}

/* ---- taking ---- */

static host_snap_section section(uint32_t kind, uint32_t version, const char *name, size_t size)
{
    return (host_snap_section){kind, version, name, (uint32_t)strlen(name), size, NULL};
}

/* Manager m's part: its snapshot size (BINARY), or its components captured as JSON (a
 * manager without snapshots, or one of plugin json_for). */
static ecs_status manager_part(host_session *hs, host_manager *m, const host_plugin *json_for,
                               part *pt, char *why, size_t len)
{
    pt->m = m;
    if (ecs_manager_snapshots(&m->desc) && m->owner != json_for) {
        snap_call c = {m, NULL, 0, ECS_OK};
        ecs_status s = guarded(m, "snapshot_size", call_size, &c, why, len);
        pt->sec = section(HOST_SNAP_BINARY, m->desc.snapshot_version, m->name, c.size);
        return s;
    }
    host_scene_captured doc;
    if (!host_manager_saves(m) || !host_manager_loads(m))
        return host_format(why, len, "manager '%s' offers neither snapshots nor JSON", m->name),
               ECS_ERR_UNSUPPORTED;
    if (!host_scene_capture(hs->scene, &m, 1, &doc))
        return host_format(why, len, "manager '%s': its components could not be written", m->name),
               ECS_ERR_PLUGIN;
    size_t ids = (size_t)doc.n * sizeof(uint32_t), size = sizeof(uint32_t) + ids + doc.len;
    if ((pt->owned = malloc(size))) {
        memcpy(pt->owned, &doc.n, sizeof doc.n);
        for (uint32_t i = 0; i < doc.n; i++)
            memcpy(pt->owned + sizeof(uint32_t) * (1 + i), &doc.ents[i].id, sizeof(uint32_t));
        memcpy(pt->owned + sizeof(uint32_t) + ids, doc.text, doc.len);
    }
    host_scene_captured_free(&doc);
    pt->sec = section(HOST_SNAP_JSON, 0, m->name, size);
    return pt->owned ? ECS_OK : (host_format(why, len, "out of memory"), ECS_ERR_NO_MEMORY);
}

/* Every part of hs into parts (1 + managers + plugins + 1 entries); how many in *n. */
static ecs_status list_parts(host_session *hs, const host_plugin *json_for, part *parts,
                             uint32_t *n, char *why, size_t len)
{
    uint32_t k = 0;
    host_core_view core = core_of(hs);
    parts[k++].sec = section(HOST_SNAP_CORE, 1, "core", host_core_snapshot_size(&core));
    for (size_t i = 0; i < hs->world->manager_count; i++) {
        ecs_status s = manager_part(hs, hs->world->managers[i], json_for, &parts[k++], why, len);
        if (s != ECS_OK) return *n = k, s;
    }
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        size_t tl = 0;
        char *text = p->has_pstate ? host_plugin_state_text(p, &tl, why, len) : NULL;
        if (p->has_pstate && !text)
            return *n = k, host_format(why, len, "plugin '%s': its plugin state: %s", p->name, why),
                   ECS_ERR_PLUGIN;
        if (!text) continue;
        parts[k].owned = text;
        parts[k++].sec = section(HOST_SNAP_PSTATE, 0, p->name, tl);
    }
    size_t sl = 0;
    if (!(parts[k].owned = host_scene_store_snapshot_write(hs->scene, &sl)))
        return *n = k, host_format(why, len, "out of memory"), ECS_ERR_NO_MEMORY;
    parts[k++].sec = section(HOST_SNAP_KEPT, 1, "scene", sl);
    *n = k;
    return ECS_OK;
}

/* Fill the laid-out container's sections: core and BINARY parts write in place. */
static ecs_status fill_parts(host_session *hs, part *parts, uint32_t n, void **data, char *why,
                             size_t len)
{
    for (uint32_t k = 0; k < n; k++) {
        if (parts[k].owned) {
            memcpy(data[k], parts[k].owned, parts[k].sec.size);
        } else if (parts[k].m) {
            snap_call c = {parts[k].m, data[k], parts[k].sec.size, ECS_OK};
            ecs_status s = guarded(parts[k].m, "snapshot_write", call_write, &c, why, len);
            if (s != ECS_OK && s != ECS_ERR_PLUGIN)
                host_format(why, len, "manager '%s': its snapshot_write failed: %s",
                            parts[k].m->name, ecs_status_text(s));
            if (s != ECS_OK) return s;
        } else {
            host_core_view core = core_of(hs);
            host_core_snapshot_write(&core, data[k]);
        }
    }
    return ECS_OK;
}

ecs_status host_snapshot_take(host_session *hs, host_snapshot *out, char *why, size_t len)
{
    return host_snapshot_take_json(hs, out, NULL, why, len);
}

ecs_status host_snapshot_take_json(host_session *hs, host_snapshot *out,
                                   const host_plugin *json_for, char *why, size_t len)
{
    out->size = 0, out->frame = hs->world->frame.frame;
    *why = '\0';
    uint32_t cap = (uint32_t)(2 + hs->world->manager_count + hs->plugin_count), n = 0;
    part *parts = calloc(cap, sizeof *parts);
    host_snap_section *secs = calloc(cap, sizeof *secs);
    void **data = calloc(cap, sizeof *data);
    ecs_status s =
        parts && secs && data ? list_parts(hs, json_for, parts, &n, why, len) : ECS_ERR_NO_MEMORY;
    for (uint32_t k = 0; s == ECS_OK && k < n; k++) secs[k] = parts[k].sec;
    size_t size = s == ECS_OK ? host_snapfmt_size(secs, n) : 0;
    if (s == ECS_OK && size > out->cap) {
        free(out->bytes);
        out->cap = (out->bytes = malloc(size)) ? size : 0;
        if (!out->bytes) s = ECS_ERR_NO_MEMORY;
    }
    if (s == ECS_OK) {
        host_snapfmt_layout(out->bytes, hs->world->frame.frame, secs, n, data);
        s = fill_parts(hs, parts, n, data, why, len);
    }
    if (s == ECS_OK) /* sealed only for a file (host_snapshot_save_file): memory stays here */
        out->size = size, memset(out->bytes + size - sizeof(uint64_t), 0, sizeof(uint64_t));
    for (uint32_t k = 0; parts && k < n; k++) free(parts[k].owned);
    free(parts), free(secs), free(data);
    if (s == ECS_ERR_NO_MEMORY && !*why) host_format(why, len, "out of memory");
    if (s != ECS_OK) host_snapshot_free(out);
    return s;
}

void host_snapshot_free(host_snapshot *s)
{
    if (!s) return;
    free(s->bytes);
    *s = (host_snapshot){NULL, 0, 0, 0};
}

/* ---- restoring ---- */

static host_manager *manager_named(host_session *hs, const host_snap_section *sec)
{
    for (size_t i = 0; i < hs->world->manager_count; i++) {
        host_manager *m = hs->world->managers[i];
        if (strlen(m->name) == sec->name_len && memcmp(m->name, sec->name, sec->name_len) == 0)
            return m;
    }
    return NULL;
}

static host_plugin *plugin_named(host_session *hs, const host_snap_section *sec)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        if (strlen(p->name) == sec->name_len && memcmp(p->name, sec->name, sec->name_len) == 0)
            return p;
    }
    return NULL;
}

/* Does the JSON part sec frame its ids and text right? */
static bool json_part_sane(const host_snap_section *sec)
{
    uint32_t n;
    if (sec->size < sizeof n) return false;
    memcpy(&n, sec->data, sizeof n);
    return (sec->size - sizeof n) / sizeof(uint32_t) >= n;
}

/* Section sec (a manager's part) against the loaded managers: ECS_OK, or refused with why. */
static ecs_status check_manager_part(host_session *hs, const host_snap_section *sec, char *why,
                                     size_t len)
{
    host_manager *m = manager_named(hs, sec);
    int nl = (int)sec->name_len;
    if (!m)
        return host_format(why, len, "manager '%.*s' is in the snapshot but not loaded", nl,
                           sec->name),
               ECS_ERR_NOT_FOUND;
    if (sec->kind == HOST_SNAP_JSON)
        return host_manager_loads(m) && json_part_sane(sec)
                   ? ECS_OK
                   : (host_format(why, len, "manager '%s': its JSON part cannot be read", m->name),
                      ECS_ERR_BAD_VALUE);
    if (!ecs_manager_snapshots(&m->desc))
        return host_format(why, len,
                           "manager '%s': its part is binary (version %u), the loaded "
                           "build (plugin '%s') offers no snapshot_read",
                           m->name, sec->version, host_owner_plugin(m->owner)->name),
               ECS_ERR_ABI;
    if (sec->version != m->desc.snapshot_version)
        return host_format(why, len,
                           "manager '%s': layout version %u in the snapshot, %u in the "
                           "loaded build of plugin '%s' (its layout changed)",
                           m->name, sec->version, m->desc.snapshot_version,
                           host_owner_plugin(m->owner)->name),
               ECS_ERR_ABI;
    return ECS_OK;
}

/* Everything checkable before a change: each part has its manager (and the reverse), each
 * plugin state its plugin; the core part is there. */
static ecs_status check_parts(host_session *hs, const host_snap_file *f, char *why, size_t len)
{
    host_snap_section sec;
    if (!host_snapfmt_find(f, HOST_SNAP_CORE, "core", &sec))
        return host_format(why, len, "no core part"), ECS_ERR_BAD_VALUE;
    for (uint32_t k = 0; k < f->count; k++) {
        sec = host_snapfmt_get(f, k);
        ecs_status s = ECS_OK;
        if (sec.kind == HOST_SNAP_BINARY || sec.kind == HOST_SNAP_JSON)
            s = check_manager_part(hs, &sec, why, len);
        else if (sec.kind == HOST_SNAP_PSTATE && !plugin_named(hs, &sec))
            s = (host_format(why, len,
                             "plugin '%.*s' has a state in the snapshot but is not "
                             "loaded",
                             (int)sec.name_len, sec.name),
                 ECS_ERR_NOT_FOUND);
        if (s != ECS_OK) return s;
    }
    for (size_t i = 0; i < hs->world->manager_count; i++) {
        host_manager *m = hs->world->managers[i];
        if (!host_snapfmt_find(f, HOST_SNAP_BINARY, m->name, &sec) &&
            !host_snapfmt_find(f, HOST_SNAP_JSON, m->name, &sec))
            return host_format(why, len,
                               "manager '%s' (plugin '%s') is loaded but not in the "
                               "snapshot",
                               m->name, host_owner_plugin(m->owner)->name),
                   ECS_ERR_NOT_FOUND;
    }
    return ECS_OK;
}

/* The live entities now (a JSON-path manager is told they died before it is refilled). */
static ecs_entity *live_entities(host_session *hs, uint32_t *n)
{
    uint32_t count = host_entities_live(hs->world->entities), k = 0;
    ecs_entity *list = malloc(((size_t)count + 1) * sizeof *list), e;
    for (uint32_t from = 1;
         list && k < count && host_entities_next_live(hs->world->entities, from, &e);
         from = ecs_entity_index(e) + 1)
        list[k++] = e;
    *n = k;
    return list;
}

/* Every manager with a JSON part hears that each live entity died (the ids as they are
 * now, before the core changes them), so that it holds nothing before it is refilled. */
static ecs_status empty_json_managers(host_session *hs, const host_snap_file *f, char *why,
                                      size_t len)
{
    uint32_t n = 0;
    ecs_entity *old = NULL;
    for (uint32_t k = 0; k < f->count; k++) {
        host_snap_section sec = host_snapfmt_get(f, k);
        host_manager *m = sec.kind == HOST_SNAP_JSON ? manager_named(hs, &sec) : NULL;
        if (!m || !m->desc.entities_destroyed) continue;
        if (!old && !(old = live_entities(hs, &n)))
            return host_format(why, len, "out of memory"), ECS_ERR_NO_MEMORY;
        host_call named = {host_owner_plugin(m->owner)->name, "entities_destroyed", m->name};
        const host_call *was = host_call_enter(&named);
        if (n) m->desc.entities_destroyed(m->desc.state, old, n);
        host_call_leave(was);
    }
    free(old);
    return ECS_OK;
}

/* Refill JSON-path manager m from its part (emptied by empty_json_managers). */
static ecs_status restore_json(host_session *hs, host_manager *m, const host_snap_section *sec,
                               char *why, size_t len)
{
    uint32_t n;
    memcpy(&n, sec->data, sizeof n);
    const char *p = (const char *)sec->data + sizeof n;
    char *name = m->name;
    host_scene_captured doc = {NULL, sec->size - sizeof n - (size_t)n * 4u, NULL, n, 1, &name, NULL,
                               NULL};
    doc.ents = malloc(((size_t)n + 1) * sizeof *doc.ents);
    doc.text = malloc(doc.len + 1);
    ecs_status s = doc.ents && doc.text ? ECS_OK : ECS_ERR_NO_MEMORY;
    if (s == ECS_OK) {
        memcpy(doc.ents, p, (size_t)n * 4u);
        memcpy(doc.text, p + (size_t)n * 4u, doc.len), doc.text[doc.len] = '\0';
        s = host_scene_restore(hs->scene, &doc, &m, 1, "snapshot", NULL);
    }
    if (s != ECS_OK)
        host_format(why, len, "manager '%s': its components could not be read back", m->name);
    free(doc.ents), free(doc.text);
    return s;
}

/* Give every manager, plugin state and the store its part (checked before). */
static ecs_status apply_parts(host_session *hs, const host_snap_file *f, char *why, size_t len)
{
    ecs_status s = ECS_OK;
    for (uint32_t k = 0; s == ECS_OK && k < f->count; k++) {
        host_snap_section sec = host_snapfmt_get(f, k);
        host_manager *m = manager_named(hs, &sec);
        if (sec.kind == HOST_SNAP_JSON) {
            s = restore_json(hs, m, &sec, why, len);
        } else if (sec.kind == HOST_SNAP_BINARY) {
            snap_call c = {m, (void *)sec.data, sec.size, ECS_OK};
            s = guarded(m, "snapshot_read", call_read, &c, why, len);
            if (s != ECS_OK && s != ECS_ERR_PLUGIN)
                host_format(why, len, "manager '%s' refused its bytes: %s", m->name,
                            ecs_status_text(s));
        } else if (sec.kind == HOST_SNAP_PSTATE) {
            host_plugin *p = plugin_named(hs, &sec);
            size_t err_at = 0;
            if (p->has_pstate)
                s = host_plugin_state_read(p, &p->pstate, sec.data, sec.size, 0, &err_at, NULL, why,
                                           len);
        } else if (sec.kind == HOST_SNAP_KEPT) {
            s = host_scene_store_snapshot_read(hs->scene, sec.data, sec.size);
            if (s != ECS_OK) host_format(why, len, "the scene store part: %s", ecs_status_text(s));
        }
    }
    return s;
}

/* host_snapshot_restore; own: bytes this process took and kept (no checksum, no pass over
 * every entity index before the change). */
static ecs_status restore(host_session *hs, const void *bytes, size_t size, bool own, bool *changed,
                          char *why, size_t len)
{
    *changed = false;
    host_snap_file f;
    host_snap_section core;
    *why = '\0';
    if (!host_snapfmt_open(bytes, size, !own, &f, why, len)) return ECS_ERR_BAD_VALUE;
    ecs_status s = check_parts(hs, &f, why, len);
    if (s != ECS_OK) return s;
    (void)host_snapfmt_find(&f, HOST_SNAP_CORE, "core", &core);
    host_core_view view = core_of(hs);
    if (!own && host_core_snapshot_check(&view, core.data, core.size) != ECS_OK)
        return host_format(why, len, "its core part (entities, signatures) is inconsistent"),
               ECS_ERR_BAD_VALUE;
    *changed = true;
    s = empty_json_managers(hs, &f, why, len);
    if (s == ECS_OK && (s = host_core_snapshot_read(&view, core.data, core.size, false)) != ECS_OK)
        host_format(why, len, "out of memory restoring signatures");
    return s == ECS_OK ? apply_parts(hs, &f, why, len) : s;
}

ecs_status host_snapshot_restore(host_session *hs, const void *bytes, size_t size, bool *changed,
                                 char *why, size_t len)
{
    return restore(hs, bytes, size, false, changed, why, len);
}

ecs_status host_snapshot_restore_own(host_session *hs, const host_snapshot *s, bool *changed,
                                     char *why, size_t len)
{
    return restore(hs, s->bytes, s->size, true, changed, why, len);
}

/* ---- files ---- */

ecs_status host_snapshot_save_file(host_session *hs, const char *path)
{
    char why[512];
    host_snapshot snap = {NULL, 0, 0, 0};
    ecs_status s = host_snapshot_take(hs, &snap, why, sizeof why);
    if (s != ECS_OK) {
        host_error("snapshot", "%s: no snapshot written: %s", path, why);
        return s;
    }
    host_snapfmt_seal(snap.bytes, snap.size);
    s = host_scene_write_bytes(path, snap.bytes, snap.size);
    if (s == ECS_OK)
        host_info("snapshot", "%s: the world after frame %llu (%zu bytes)", path,
                  (unsigned long long)snap.frame, snap.size);
    host_snapshot_free(&snap);
    return s;
}

/* The whole regular file path into *bytes (malloc'd), *size bytes; false with why. */
static bool read_whole(const char *path, char **bytes, size_t *size, char *why, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    *bytes = NULL;
    if (fd < 0 || fstat(fd, &st) != 0) {
        host_format(why, len, "%s", strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return host_format(why, len, "not a regular file"), false;
    }
    char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    for (ssize_t r = 1; b && r > 0 && got<(size_t)st.st_size; got += r> 0 ? (size_t)r : 0)
        r = read(fd, b + got, (size_t)st.st_size - got);
    close(fd);
    if (!b) return host_format(why, len, "out of memory"), false;
    *bytes = b, *size = got;
    return true;
}

ecs_status host_snapshot_load_file(host_session *hs, const char *path)
{
    char why[512], *bytes;
    size_t size;
    if (!read_whole(path, &bytes, &size, why, sizeof why)) {
        host_error("snapshot", "%s: cannot read it: %s", path, why);
        return ECS_ERR_IO;
    }
    bool changed;
    ecs_status s = host_snapshot_restore(hs, bytes, size, &changed, why, sizeof why);
    free(bytes);
    if (s == ECS_OK)
        host_info("snapshot", "%s: restored, frame %llu next", path,
                  (unsigned long long)hs->world->frame.frame);
    else if (!changed)
        host_error("snapshot", "%s: refused, the world untouched: %s", path, why);
    else
        host_error("snapshot", "%s: failed while restoring, the world is incomplete: %s", path,
                   why);
    return s;
}
