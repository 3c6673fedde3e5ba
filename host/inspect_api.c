/* SPDX-License-Identifier: MIT */
/* inspect_api.c: the inspector's answers made at once (inspect_int.h, docs/inspector.md):
 * the world line, plugins, schedule, log and events, one entity, edits, saves.
 *
 * Every change goes through the paths a scene load takes (validation, references, managers
 * told), so the inspector can do nothing a scene file cannot. Whatever walks the whole
 * world is a job (inspect_search.c), never an answer made here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "inspect_int.h"
#include "jobs.h"
#include "json.h"
#include "log.h"
#include "scene.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX     1000

/* ---- the world ---- */

cJSON *inspect_world_json(host_inspector *in)
{
    host_session *hs = in->hs;
    cJSON *v = cJSON_CreateObject();
    size_t loaded = 0;
    for (size_t i = 0; i < hs->plugin_count; i++)
        loaded += hs->plugins[i]->status == HOST_PLUGIN_LOADED;
    cJSON_AddNumberToObject(v, "frame", (double)hs->world->frame.frame);
    cJSON_AddNumberToObject(v, "dt", hs->world->frame.dt);
    cJSON_AddNumberToObject(v, "time", hs->world->frame.time);
    cJSON_AddNumberToObject(v, "fps", in->fps);
    cJSON_AddNumberToObject(v, "entities", host_entities_live(hs->world->entities));
    cJSON_AddNumberToObject(v, "plugins", (double)loaded);
    cJSON_AddNumberToObject(v, "managers", (double)hs->world->manager_count);
    cJSON_AddNumberToObject(v, "systems", (double)hs->world->system_count);
    cJSON_AddNumberToObject(v, "uptime_s", (double)(host_now_ns() - in->start_ns) / 1e9);
    cJSON_AddBoolToObject(v, "read_only", in->read_only);
    cJSON *save = cJSON_AddObjectToObject(v, "save"); /* where the page may save */
    if (in->save_file) cJSON_AddStringToObject(save, "file", in->save_file);
    if (in->save_dir) cJSON_AddStringToObject(save, "dir", in->save_dir);
    return v;
}

static const char *status_name(host_plugin_status s)
{
    switch (s) {
    case HOST_PLUGIN_FOUND:
        return "found";
    case HOST_PLUGIN_LOADED:
        return "loaded";
    case HOST_PLUGIN_SKIPPED:
        return "skipped";
    case HOST_PLUGIN_DISABLED:
        return "disabled";
    case HOST_PLUGIN_UNLOADED:
        return "unloaded";
    case HOST_PLUGIN_PARKED:
        return "parked";
    }
    return "?";
}

/* p's history: its last HOST_HISTORY events (reloads, refusals, crashes, rollbacks,
 * unloads, parks, returns), oldest first. */
static cJSON *reloads_json(const host_plugin *p)
{
    static const char *const kinds[] = {"reload", "refused", "crash", "rollback",
                                        "unload", "park",    "back"};
    cJSON *hist = cJSON_CreateArray();
    uint32_t kept = p->reload_count < HOST_HISTORY ? p->reload_count : HOST_HISTORY;
    for (uint32_t k = p->reload_count - kept; k < p->reload_count; k++) {
        const struct host_reload_note *rn = &p->reloads[k % HOST_HISTORY];
        cJSON *h = cJSON_CreateObject();
        cJSON_AddNumberToObject(h, "time", rn->time);
        cJSON_AddStringToObject(h, "kind",
                                rn->kind < sizeof kinds / sizeof *kinds ? kinds[rn->kind] : "?");
        cJSON_AddBoolToObject(h, "done", rn->done);
        cJSON_AddStringToObject(h, "what", rn->what);
        cJSON_AddItemToArray(hist, h);
    }
    return hist;
}

cJSON *inspect_plugins_json(host_inspector *in)
{
    host_session *hs = in->hs;
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < hs->plugin_count; i++) {
        const host_plugin *p = hs->plugins[i];
        cJSON *v = cJSON_CreateObject();
        char abi[32];
        snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
        cJSON_AddStringToObject(v, "name", p->name ? p->name : "");
        cJSON_AddStringToObject(v, "version", p->version ? p->version : "");
        cJSON_AddStringToObject(v, "file", p->file);
        cJSON_AddStringToObject(v, "abi", abi);
        cJSON_AddNumberToObject(v, "state_version", p->state_version);
        cJSON_AddStringToObject(v, "status", status_name(p->status));
        cJSON_AddStringToObject(v, "reason", p->reason);
        cJSON_AddNumberToObject(v, "memory_bytes", (double)p->mem.bytes);
        cJSON *mgrs = cJSON_AddArrayToObject(v, "managers");
        for (size_t m = 0; m < hs->world->manager_count; m++)
            if (hs->world->managers[m]->owner == p)
                cJSON_AddItemToArray(mgrs, cJSON_CreateString(hs->world->managers[m]->name));
        cJSON *apis = cJSON_AddArrayToObject(v, "apis");
        for (size_t a = 0; a < p->api_count; a++)
            cJSON_AddItemToArray(apis, cJSON_CreateString(p->api_names[a]));
        cJSON *deps = cJSON_AddArrayToObject(v, "dependencies");
        for (char **d = p->deps; d && *d; d++) cJSON_AddItemToArray(deps, cJSON_CreateString(*d));
        for (size_t u = 0; u < p->use_count; u++)
            cJSON_AddItemToArray(deps, cJSON_CreateString(p->uses[u].name));
        cJSON_AddItemToObject(v, "reloads", reloads_json(p));
        cJSON_AddItemToArray(list, v);
    }
    return list;
}

static step_mark *mark_of(host_inspector *in, const void *step)
{
    for (size_t i = 0; i < in->mark_count; i++)
        if (in->marks[i].step == step) return &in->marks[i];
    step_mark *v = realloc(in->marks, (in->mark_count + 1) * sizeof *v);
    if (!v) return NULL;
    in->marks = v;
    in->marks[in->mark_count] = (step_mark){step, 0, 0, 0};
    return &in->marks[in->mark_count++];
}

/* One row of the schedule: step st's timings. */
static cJSON *step_json(host_inspector *in, const host_step *st)
{
    host_session *hs = in->hs;
    const host_manager *m = st->m;
    const host_system *s = st->s;
    const host_timing *t = m ? &m->timing : &s->timing;
    double frame_total =
        (double)hs->world->timing.timed_frames_ns; /* the frames the steps were timed in */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m ? m->name : s->name);
    cJSON_AddStringToObject(
        o, "plugin", m ? host_owner_plugin(m->owner)->name : host_owner_plugin(s->owner)->name);
    cJSON_AddStringToObject(o, "kind", m ? "manager" : "system");
    if (m && m->desc.count)
        cJSON_AddNumberToObject(o, "components", host_manager_count(hs->world, m));
    else if (!m) {
        const host_collection *c = host_collections_get(&hs->world->collections, s->collection);
        cJSON_AddNumberToObject(o, "components", c ? c->count : 0);
    }
    step_mark *mk = mark_of(in, m ? (const void *)m : (const void *)s);
    double recent = mk ? mk->last_us : 0;
    if (mk && t->count > mk->count)
        recent = (double)(t->total_ns - mk->total_ns) / (double)(t->count - mk->count) / 1e3;
    if (mk) mk->total_ns = t->total_ns, mk->count = t->count, mk->last_us = recent;
    cJSON_AddNumberToObject(o, "last_us", recent);
    cJSON_AddNumberToObject(o, "mean_us", host_timing_mean(t) / 1e3);
    cJSON_AddNumberToObject(o, "p99_us", (double)host_timing_quantile(t, 0.99) / 1e3);
    cJSON_AddNumberToObject(o, "max_us", (double)t->max_ns / 1e3);
    cJSON_AddNumberToObject(o, "share", frame_total > 0 ? (double)t->total_ns / frame_total : 0.0);
    return o;
}

/* The inspector's own row of the schedule: its time per frame (answers, jobs, downloads;
 * at the boundary and in the time the loop would sleep), kind "host". */
static cJSON *own_json(host_inspector *in)
{
    const host_timing *t = &in->own;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "inspector");
    cJSON_AddStringToObject(o, "plugin", "ecs-host");
    cJSON_AddStringToObject(o, "kind", "host");
    cJSON_AddNumberToObject(
        o, "last_us", in->frame_n ? in->own_us[(in->frame_at + FRAME_RING - 1) % FRAME_RING] : 0);
    cJSON_AddNumberToObject(o, "mean_us", host_timing_mean(t) / 1e3);
    cJSON_AddNumberToObject(o, "p99_us", (double)host_timing_quantile(t, 0.99) / 1e3);
    cJSON_AddNumberToObject(o, "max_us", (double)t->max_ns / 1e3);
    cJSON_AddNumberToObject(o, "boundary_us", (double)in->boundary_ns / 1e3);
    return o;
}

/* Each job thread's share of the time since the previous /api/schedule spent in jobs (of
 * the time since the start at the first): [{"thread": "main", "busy": 0.12}, ...]. */
static cJSON *jobs_json(host_inspector *in)
{
    uint64_t busy[64], now = host_now_ns();
    uint32_t n = host_jobs_busy(in->hs->world->jobs, busy, 64);
    uint64_t since = in->jobs_at_ns ? in->jobs_at_ns : in->start_ns;
    cJSON *a = cJSON_CreateArray();
    for (uint32_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        char name[16];
        snprintf(name, sizeof name, i ? "ecs-job-%u" : "main", i);
        cJSON_AddStringToObject(o, "thread", name);
        double share =
            now > since ? (double)(busy[i] - in->jobs_busy[i]) / (double)(now - since) : 0;
        cJSON_AddNumberToObject(o, "busy", share);
        in->jobs_busy[i] = busy[i];
        cJSON_AddItemToArray(a, o);
    }
    in->jobs_at_ns = now;
    return a;
}

cJSON *inspect_schedule_json(host_inspector *in)
{
    host_session *hs = in->hs;
    cJSON *v = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(v, "steps");
    host_step *rows =
        malloc((hs->world->manager_count + hs->world->system_count + 1) * sizeof *rows);
    size_t n = rows ? host_schedule_all(hs->world, rows) : 0;
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(steps, step_json(in, &rows[i]));
    free(rows);
    cJSON_AddItemToArray(steps, own_json(in));
    cJSON_AddItemToObject(v, "jobs", jobs_json(in));
    const host_timing *f = &hs->world->timing.frame_timing;
    cJSON_AddNumberToObject(v, "frame_mean_us", host_timing_mean(f) / 1e3);
    cJSON_AddNumberToObject(v, "frame_p99_us", (double)host_timing_quantile(f, 0.99) / 1e3);
    cJSON *frames = cJSON_AddArrayToObject(v, "frames_us"); /* oldest first */
    cJSON *own = cJSON_AddArrayToObject(v, "inspector_us");
    for (uint32_t i = 0; i < in->frame_n; i++) {
        uint32_t at = (in->frame_at + FRAME_RING - in->frame_n + i) % FRAME_RING;
        cJSON_AddItemToArray(frames, cJSON_CreateNumber(in->frame_us[at]));
        cJSON_AddItemToArray(own, cJSON_CreateNumber(in->own_us[at]));
    }
    return v;
}

/* ---- entities ---- */

/* The page arguments of GET /api/entities[/{id}/children]: false with the reply made when
 * one is wrong. */
static bool page_args(struct MHD_Connection *c, inspect_page_args *a, enum MHD_Result *res)
{
    const char *roots = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "roots");
    const char *full = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "full");
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    const char *query = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "query");
    *a = (inspect_page_args){inspect_query_long(c, "offset", 0, 1L << 30),
                             inspect_query_long(c, "limit", PAGE_DEFAULT, PAGE_MAX),
                             full && !strcmp(full, "1"),
                             roots && !strcmp(roots, "1"),
                             name && *name ? name : NULL,
                             query && *query ? query : NULL};
    if (a->offset >= 0 && a->limit >= 0) return true;
    *res = inspect_reply_error(c, 400, "offset and limit are numbers from 0 (limit at most 1000)");
    return false;
}

enum MHD_Result inspect_entity_page(host_inspector *in, struct MHD_Connection *c, request *r)
{
    inspect_page_args a;
    enum MHD_Result res;
    if (!page_args(c, &a, &res)) return res;
    if (a.limit == 0 && !a.name && !a.query && !a.roots) { /* only the count */
        cJSON *v = cJSON_CreateObject();
        cJSON_AddArrayToObject(v, "items");
        cJSON_AddNumberToObject(v, "offset", (double)a.offset);
        cJSON_AddNumberToObject(v, "total", host_entities_live(in->hs->world->entities));
        return inspect_reply_json(c, 200, v);
    }
    return inspect_index_page(in, c, r, &a);
}

/* {"id", "scene_id", "components": {manager: value}} of a live e. */
static cJSON *entity_json(host_session *hs, ecs_entity e)
{
    cJSON *objs = inspect_entities_of(hs, &e, 1), *obj = cJSON_DetachItemFromArray(objs, 0);
    cJSON_Delete(objs);
    if (!obj) return NULL;
    char id[32];
    inspect_id_text(e, id, sizeof id);
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "id", id);
    cJSON *sid = cJSON_DetachItemFromObjectCaseSensitive(obj, "id");
    cJSON_AddItemToObject(v, "scene_id", sid ? sid : cJSON_CreateString(""));
    cJSON_AddItemToObject(v, "components", obj);
    return v;
}

static enum MHD_Result reply_entity(struct MHD_Connection *c, host_session *hs, ecs_entity e,
                                    unsigned status)
{
    cJSON *v = entity_json(hs, e);
    return v ? inspect_reply_json(c, status, v)
             : inspect_reply_error(c, 500, "its components could not be read");
}

/* ---- writes ---- */

/* RFC 7386, JSON merge patch: patch (consumed) merged into target (consumed, may be NULL);
 * the result. An object patch changes only the members it names (null removes one), any
 * other patch replaces the whole value. */
static cJSON *merge_patch(cJSON *target, cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return patch;
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
    }
    while (patch->child) {
        cJSON *member = cJSON_DetachItemViaPointer(patch, patch->child);
        cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(target, member->string);
        if (cJSON_IsNull(member)) {
            cJSON_Delete(old);
            cJSON_Delete(member);
            continue;
        }
        char *key = member->string;
        member->string = NULL;
        cJSON_AddItemToObject(target, key, merge_patch(old, member));
        free(key);
    }
    cJSON_Delete(patch);
    return target;
}

/* The PATCH body merged into e's value of manager (its JSON as GET shows it), as text
 * (malloc'd); NULL with the reply made in *res when the body is not JSON. */
static char *patched(host_inspector *in, struct MHD_Connection *c, request *r, ecs_entity e,
                     const char *manager, enum MHD_Result *res)
{
    char err[800];
    cJSON *patch = host_json_parse("body", r->body ? r->body : "", r->len, err, sizeof err);
    if (!patch) return *res = inspect_reply_error(c, 400, err), NULL;
    cJSON *now = entity_json(in->hs, e);
    cJSON *value = cJSON_DetachItemFromObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(now, "components"), manager);
    cJSON_Delete(now);
    cJSON *merged = merge_patch(value, patch);
    char *text = merged ? cJSON_PrintUnformatted(merged) : NULL;
    cJSON_Delete(merged);
    if (!text) *res = inspect_reply_error(c, 500, "out of memory");
    return text;
}

/* PUT /api/entities/{id}/{manager}: the component replaced by the body; PATCH: the body
 * merged into it (only the members it names change). */
static enum MHD_Result edit_component(host_inspector *in, struct MHD_Connection *c, request *r,
                                      ecs_entity e, const char *manager, bool patch)
{
    char err[800];
    enum MHD_Result res = MHD_NO;
    char *text = patch ? patched(in, c, r, e, manager, &res) : NULL;
    if (patch && !text) return res;
    const char *body = patch ? text : r->body ? r->body : "";
    ecs_status s = host_scene_edit(in->hs->scene, e, manager, body, patch ? strlen(text) : r->len,
                                   err, sizeof err);
    free(text);
    if (s == ECS_ERR_NOT_FOUND && !strncmp(err, "no manager", 10))
        return inspect_reply_error(c, 404, err);
    if (s != ECS_OK) return inspect_reply_error(c, s == ECS_ERR_UNSUPPORTED ? 405 : 400, err);
    host_info("inspect", "entity %u.%u: %s %s", ecs_entity_index(e), ecs_entity_generation(e),
              manager, patch ? "changed" : "replaced");
    return reply_entity(c, in->hs, e, 200);
}

typedef struct remove_call {
    host_manager *m;
    ecs_entity e;
    ecs_status s;
} remove_call;

static void call_remove(void *arg)
{
    remove_call *k = arg;
    k->s = k->m->desc.remove_component(k->m->desc.state, k->e);
}

/* DELETE /api/entities/{id}/{manager}: e's component of manager taken away, through the
 * manager's remove_component (under the crash guard). */
static enum MHD_Result remove_component(host_inspector *in, struct MHD_Connection *c, ecs_entity e,
                                        const char *manager)
{
    host_session *hs = in->hs;
    host_manager *m = NULL;
    for (size_t i = 0; i < hs->world->manager_count && !m; i++)
        if (!strcmp(hs->world->managers[i]->name, manager)) m = hs->world->managers[i];
    if (!m) return inspect_reply_error(c, 404, "no such manager is loaded");
    if (!m->desc.remove_component)
        return inspect_reply_error(c, 405,
                                   "this manager offers no remove_component: its "
                                   "components cannot be removed from outside");
    remove_call k = {m, e, ECS_OK};
    int sig = host_guard_run(call_remove, &k);
    if (sig) {
        host_plugin_crashed(m->owner, sig, "remove_component");
        return inspect_reply_error(c, 500, "the manager crashed removing it (see the log)");
    }
    if (k.s != ECS_OK) return inspect_reply_error(c, 400, ecs_status_text(k.s));
    host_info("inspect", "entity %u.%u: %s removed", ecs_entity_index(e), ecs_entity_generation(e),
              manager);
    return reply_entity(c, hs, e, 200);
}

enum MHD_Result inspect_entity(host_inspector *in, struct MHD_Connection *c, request *r,
                               const char *method, ecs_entity e, const char *rest)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!strcmp(rest, "/children")) {
        inspect_page_args a;
        enum MHD_Result res;
        if (!get) return inspect_reply_error(c, 405, "GET only");
        return page_args(c, &a, &res) ? inspect_children_page(in, c, r, e, &a) : res;
    }
    if (!*rest) {
        if (get) return reply_entity(c, in->hs, e, 200);
        if (!strcmp(method, "DELETE")) {
            char id[32];
            inspect_id_text(e, id, sizeof id);
            cJSON *v = inspect_destroy(in, e);
            host_info("inspect", "entity %s destroyed, %d with it", id,
                      (int)cJSON_GetObjectItemCaseSensitive(v, "count")->valuedouble - 1);
            return inspect_reply_json(c, 200, v);
        }
        return inspect_reply_error(c, 405, "GET or DELETE");
    }
    bool put = !strcmp(method, "PUT"), patch = !strcmp(method, "PATCH");
    if (!strcmp(method, "DELETE")) return remove_component(in, c, e, rest + 1);
    if (!put && !patch)
        return inspect_reply_error(c, 405,
                                   "a component is changed with PATCH, replaced (or added) with "
                                   "PUT, removed with DELETE");
    return edit_component(in, c, r, e, rest + 1, patch);
}

enum MHD_Result inspect_create_entity(host_inspector *in, struct MHD_Connection *c, request *r)
{
    char err[800];
    cJSON *obj = host_json_parse("body", r->body ? r->body : "", r->len, err, sizeof err);
    if (!obj) return inspect_reply_error(c, 400, err);
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return inspect_reply_error(c, 400, "body: expected an entity object, as in a scene file");
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    ecs_entity taken = cJSON_IsString(id) ? host_scene_entity_named(in->hs->scene, id->valuestring)
                                          : ecs_entity_null();
    char why[400], tid[32];
    if (!ecs_entity_is_null(taken)) {
        inspect_id_text(taken, tid, sizeof tid);
        host_format(why, sizeof why, "id: '%s' is the id of entity %s already", id->valuestring,
                    tid);
    }
    cJSON_Delete(obj);
    if (!ecs_entity_is_null(taken)) return inspect_reply_error(c, 409, why);
    size_t len = r->len + 64;
    char *doc = malloc(len);
    if (!doc) return inspect_reply_error(c, 500, "out of memory");
    int n = snprintf(doc, len, "{\"version\": 1, \"entities\": [\n%.*s\n]}", (int)r->len, r->body);
    ecs_entity made = ecs_entity_null();
    ecs_status s =
        host_scene_load_text(in->hs->scene, "body", doc, (size_t)n, &made, err, sizeof err);
    free(doc);
    if (s != ECS_OK) return inspect_reply_error(c, 400, err);
    return reply_entity(c, in->hs, made, 201);
}

/* Is name a file name a save may take in the save folder: 1-128 of [A-Za-z0-9._-], not
 * starting with '.', ending in ".json"? */
static bool save_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 6 || n > 128 || name[0] == '.' || strcmp(name + n - 5, ".json") != 0) return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("._-", *c)) return false;
    return true;
}

/* Where POST /api/save writes, from its body: the --save file ({}), or a name in the save
 * folder ({"name": "N.json"}); never a path the request chooses. The target into buf, or
 * NULL with the HTTP status and message set. */
static const char *save_target(host_inspector *in, const cJSON *body, char *buf, size_t size,
                               unsigned *status, const char **msg)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(body, "name");
    *status = 400;
    if (!cJSON_IsObject(body) || cJSON_GetObjectItemCaseSensitive(body, "path") ||
        (name && !cJSON_IsString(name)) || cJSON_GetArraySize(body) > (name ? 1 : 0))
        return *msg = "body: expected {} (the --save file) or {\"name\": \"NAME.json\"} (a file in "
                      "the --inspect-save-dir folder): where a save goes is chosen at start, "
                      "never by a request",
               NULL;
    if (!name) {
        *status = 409;
        if (!in->save_file)
            return *msg = "nowhere to save: start ecs-host with --save FILE (or "
                          "--inspect-save-dir DIR and give a name)",
                   NULL;
        return in->save_file;
    }
    if (!in->save_dir)
        return *status = 409, *msg = "no save folder: start ecs-host with --inspect-save-dir DIR",
               NULL;
    if (!save_name_ok(name->valuestring))
        return *msg = "name: expected a file name of 1-128 letters, digits, '.', '_' or '-', "
                      "not starting with '.', ending in \".json\"",
               NULL;
    snprintf(buf, size, "%s/%s", in->save_dir, name->valuestring);
    struct stat st;
    if (lstat(buf, &st) == 0 && !S_ISREG(st.st_mode))
        return *msg = "name: a file of that name is there and is not a regular file (a "
                      "symlink, a folder): not replaced",
               NULL;
    return buf;
}

enum MHD_Result inspect_save_world(host_inspector *in, struct MHD_Connection *c, request *r)
{
    char err[800], target[4200];
    cJSON *body =
        r->len ? host_json_parse("body", r->body, r->len, err, sizeof err) : cJSON_CreateObject();
    if (!body) return inspect_reply_error(c, 400, err);
    unsigned status;
    const char *msg = NULL, *path = save_target(in, body, target, sizeof target, &status, &msg);
    cJSON_Delete(body);
    if (!path) return inspect_reply_error(c, status, msg);
    uint64_t t0 = host_now_ns();
    if (host_scene_save(in->hs->scene, path) != ECS_OK)
        return inspect_reply_error(c, 500,
                                   "the save failed (the log says why); the old file is as it was");
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "saved", path);
    cJSON_AddNumberToObject(v, "ms", (double)(host_now_ns() - t0) / 1e6);
    return inspect_reply_json(c, 200, v);
}

/* GET /api/scene: the world as a scene file, written as the client reads it (no file, no
 * copy of the whole text): libmicrohttpd asks for the next bytes when the socket can take
 * them, between frames, and each time gets the next STREAM_ENTITIES live entities (a few
 * hundred microseconds of writing), after the document's head and before its tail. */
#define STREAM_ENTITIES 64u
#define STREAM_NS       300000u /* a call for more bytes writes entities for at most this */

typedef struct scene_stream {
    host_inspector *in;
    host_session *hs;
    char *head, *tail, *buf; /* buf[at..len): made, not sent yet */
    size_t head_len, tail_len, len, at;
    uint32_t cursor; /* the next entity index */
    int phase;       /* 0: the head next, 1: entities, 2: the tail sent, the end next */
    bool first;      /* no entity written yet: none needs the ", " before it */
} scene_stream;

/* The next piece of the document into s->buf; false at the end, or on error (logged). */
static bool stream_more(scene_stream *s)
{
    free(s->buf);
    s->buf = NULL, s->len = s->at = 0;
    if (s->phase == 0) {
        s->buf = s->head, s->len = s->head_len, s->head = NULL, s->phase = 1;
        return true;
    }
    ecs_entity chunk[STREAM_ENTITIES], e;
    uint32_t n = 0;
    while (s->phase == 1 && n < STREAM_ENTITIES &&
           host_entities_next_live(s->hs->world->entities, s->cursor, &e))
        chunk[n++] = e, s->cursor = ecs_entity_index(e) + 1;
    if (s->phase == 1 && n == 0) { /* every entity written */
        s->buf = s->tail, s->len = s->tail_len, s->tail = NULL, s->phase = 2;
        return true;
    }
    if (s->phase == 2) return false;
    size_t len = 0;
    char *text = host_scene_entities_text(s->hs->scene, chunk, n, &len); /* "[obj, obj]" */
    if (!text) {
        host_error("inspect", "GET /api/scene: cut short: a manager could not write its "
                              "components (see above)");
        return false;
    }
    bool empty = len <= 2, comma = !s->first && !empty; /* "[]": every one died meanwhile */
    memmove(text + 2 * comma, text + 1, len - 2);       /* the objects, after ", " when needed */
    if (comma) text[0] = ',', text[1] = ' ';
    s->buf = text, s->len = len - 2 + 2 * comma;
    s->first = s->first && empty;
    return true;
}

/* libmicrohttpd's call for the next bytes (up to max): as many pieces as fit, for at most
 * STREAM_NS; END_OF_STREAM after the tail. */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    scene_stream *s = cls;
    size_t n = 0;
    uint64_t until = host_now_ns() + STREAM_NS;
    while (n < max) {
        if (s->at == s->len && (n && host_now_ns() >= until)) break;
        if (s->at == s->len && !stream_more(s)) {
            if (n) break;
            return s->phase == 2 ? MHD_CONTENT_READER_END_OF_STREAM
                                 : MHD_CONTENT_READER_END_WITH_ERROR;
        }
        size_t k = s->len - s->at < max - n ? s->len - s->at : max - n;
        memcpy(out + n, s->buf + s->at, k);
        s->at += k, n += k;
    }
    s->in->stream_bytes += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    scene_stream *s = cls;
    s->in->streams--;
    free(s->head), free(s->tail), free(s->buf);
    free(s);
}

enum MHD_Result inspect_download_scene(host_inspector *in, struct MHD_Connection *c)
{
    scene_stream *s = calloc(1, sizeof *s);
    if (!s ||
        !host_scene_document_ends(in->hs->scene, &s->head, &s->head_len, &s->tail, &s->tail_len)) {
        free(s);
        return inspect_reply_error(c, 500, "out of memory");
    }
    s->in = in;
    s->hs = in->hs;
    s->first = true;
    in->streams++; /* until stream_free: the frame loop serves it between frames */
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read, s, stream_free);
    if (!r) return stream_free(s), MHD_NO;
    inspect_headers(r, "application/json");
    MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"scene.json\"");
    enum MHD_Result ok = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ok;
}

/* ---- the log ---- */

cJSON *inspect_log_json(host_inspector *in, uint64_t since)
{
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    cJSON *v = cJSON_CreateObject(), *lines = cJSON_AddArrayToObject(v, "lines");
    uint64_t first = in->next_seq > LOG_RING ? in->next_seq - LOG_RING : 0;
    for (uint64_t s = since > first ? since : first; s < in->next_seq; s++) {
        const log_line *l = &in->ring[s % LOG_RING];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "seq", (double)l->seq);
        cJSON_AddNumberToObject(o, "t", l->t);
        cJSON_AddStringToObject(o, "level", levels[l->level & 3]);
        cJSON_AddStringToObject(o, "who", l->who ? l->who : "");
        cJSON_AddStringToObject(o, "msg", l->msg ? l->msg : "");
        cJSON_AddItemToArray(lines, o);
    }
    cJSON_AddNumberToObject(v, "next", (double)in->next_seq);
    return v;
}

/* Server-Sent Events: what happened since the client's Last-Event-ID (or ?since=): the
 * log lines (a reload's as event "reload"), then one "frame" event; "retry: 100" makes
 * the browser's EventSource ask again 100 ms after the answer ends, so a client gets at
 * most 10 frame events a second and never holds the host: each answer is complete. */
enum MHD_Result inspect_events(host_inspector *in, struct MHD_Connection *c)
{
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    uint64_t since = last && *last ? strtoull(last, NULL, 10) + 1 : 0;
    if (!last || !*last) {
        long s = inspect_query_long(c, "since", 0, 1L << 62);
        since = s < 0 ? 0 : (uint64_t)s;
    }
    cJSON *lines = inspect_log_json(in, since), *l;
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    if (!out) return cJSON_Delete(lines), MHD_NO;
    len += (size_t)snprintf(out, cap, "retry: 100\n\n");
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(lines, "lines"))
    {
        char *data = cJSON_PrintUnformatted(l);
        const char *who = cJSON_GetObjectItemCaseSensitive(l, "who")->valuestring;
        size_t need = len + (data ? strlen(data) : 0) + 96;
        if (need > cap) {
            char *bigger = realloc(out, need * 2);
            if (!bigger) break;
            out = bigger, cap = need * 2;
        }
        if (data)
            len += (size_t)snprintf(out + len, cap - len, "id: %.0f\nevent: %s\ndata: %s\n\n",
                                    cJSON_GetObjectItemCaseSensitive(l, "seq")->valuedouble,
                                    strcmp(who, "reload") ? "log" : "reload", data);
        free(data);
    }
    cJSON_Delete(lines);
    cJSON *frame = inspect_world_json(in);
    cJSON_AddNumberToObject(frame, "frame_us",
                            in->frame_n ? in->frame_us[(in->frame_at + FRAME_RING - 1) % FRAME_RING]
                                        : 0);
    char *data = cJSON_PrintUnformatted(frame);
    cJSON_Delete(frame);
    size_t need = len + (data ? strlen(data) : 0) + 64;
    if (need > cap) {
        char *bigger = realloc(out, need);
        if (bigger) out = bigger, cap = need;
    }
    if (data && need <= cap)
        len += (size_t)snprintf(out + len, cap - len, "event: frame\ndata: %s\n\n", data);
    free(data);
    return inspect_reply_text(c, 200, "text/event-stream", out, len);
}
