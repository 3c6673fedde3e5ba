/* SPDX-License-Identifier: MIT */
/* inspect.c: the inspector's server and JSON API (inspect.h, docs/inspector.md).
 *
 * libmicrohttpd in its "external select" mode with epoll: the daemon has no thread; the
 * frame loop runs it (MHD_run) at frame boundaries and while it waits for the next frame.
 * A request's body is gathered (up to 1 MiB), then answered in one call that reads or
 * changes the world: every change goes through the paths a scene load takes (validation,
 * references, managers told), so the inspector can do nothing a scene file cannot.
 */
#include "inspect.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inspect_page.h" /* host_inspect_page: the page, built from inspect_page.html */
#include "json.h"
#include "log.h"
#include "scene.h"
#include "world.h"

#define BODY_LIMIT   (1u << 20) /* a request body over 1 MiB: 413 */
#define LOG_RING     1000       /* log lines kept for a page that connects late */
#define FRAME_RING   600        /* frame times kept for the chart (10 s at 60 fps) */
#define PAGE_DEFAULT 100
#define PAGE_MAX     1000

typedef struct log_line {
    uint64_t seq;
    double t; /* seconds since the inspector started */
    int level;
    char *who, *msg;
} log_line;

typedef struct step_mark {
    const void *step; /* the manager or system */
    uint64_t total_ns, count;
    double last_us; /* what the previous request said: kept while no timed frame ran */
} step_mark;

struct host_inspector {
    host_world *w;
    struct MHD_Daemon *d;
    int epoll_fd;
    char token[33];
    char addr[INET_ADDRSTRLEN];
    unsigned port;
    bool read_only;
    uint64_t start_ns;
    /* frames: the measured rate and the last frame times */
    uint64_t rate_t0, rate_frame0, last_total_ns, last_count;
    double fps;
    float frame_us[FRAME_RING];
    uint32_t frame_at, frame_n;
    /* the schedule's recent times: the totals at the last /api/schedule */
    step_mark *marks;
    size_t mark_count;
    /* the log */
    log_line ring[LOG_RING];
    uint64_t next_seq;
};

typedef struct request {
    char *body;
    size_t len, cap;
    bool too_big;
} request;

/* ---- the log ring ---- */

static void on_log(void *ctx, int level, const char *who, const char *msg)
{
    host_inspector *in = ctx;
    log_line *l = &in->ring[in->next_seq % LOG_RING];
    free(l->who);
    free(l->msg);
    *l = (log_line){in->next_seq++, (double)(host_now_ns() - in->start_ns) / 1e9, level,
                    strdup(who ? who : "ecs-host"), strdup(msg)};
}

/* ---- replies ---- */

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *type,
                                  char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Send v (consumed) as JSON. */
static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, cJSON *v)
{
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    if (!text) return MHD_NO;
    return reply_text(c, status, "application/json", text, strlen(text));
}

/* {"error": message, "path": path}. A scene loader's message about the request's entity,
 * "NAME:L:C: entities[0].PATH: what", becomes "PATH: what" with "path": "PATH" (the
 * position is in the scene the request was wrapped in, not in the body). */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    cJSON *v = cJSON_CreateObject();
    const char *p = strstr(msg, "entities[0]."), *end = p ? strstr(p, ": ") : NULL;
    if (p && end) {
        p += strlen("entities[0].");
        char path[300];
        snprintf(path, sizeof path, "%.*s", (int)(end - p), p);
        cJSON_AddStringToObject(v, "error", p);
        cJSON_AddStringToObject(v, "path", path);
    } else {
        cJSON_AddStringToObject(v, "error", msg);
    }
    return reply_json(c, status, v);
}

/* ---- ids ---- */

static void id_text(ecs_entity e, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u", ecs_entity_index(e), ecs_entity_generation(e));
}

/* "INDEX.GENERATION" into *e: false when it is not one. */
static bool parse_id(const char *s, size_t n, ecs_entity *e)
{
    char text[32], *end;
    if (n == 0 || n >= sizeof text) return false;
    memcpy(text, s, n);
    text[n] = '\0';
    if (!isdigit((unsigned char)text[0])) return false;
    unsigned long idx = strtoul(text, &end, 10);
    if (*end != '.' || !isdigit((unsigned char)end[1])) return false;
    unsigned long gen = strtoul(end + 1, &end, 10);
    if (*end || idx > ECS_ENTITY_MAX_INDEX || gen > ECS_ENTITY_GENERATION_MASK) return false;
    *e = ecs_entity_make((uint32_t)idx, (uint32_t)gen);
    return true;
}

/* ---- the world ---- */

static cJSON *world_json(host_inspector *in)
{
    host_world *w = in->w;
    cJSON *v = cJSON_CreateObject();
    size_t loaded = 0;
    for (size_t i = 0; i < w->plugin_count; i++)
        loaded += w->plugins[i]->status == HOST_PLUGIN_LOADED;
    cJSON_AddNumberToObject(v, "frame", (double)w->frame.frame);
    cJSON_AddNumberToObject(v, "dt", w->frame.dt);
    cJSON_AddNumberToObject(v, "time", w->frame.time);
    cJSON_AddNumberToObject(v, "fps", in->fps);
    cJSON_AddNumberToObject(v, "entities", host_entities_live(w->entities));
    cJSON_AddNumberToObject(v, "plugins", (double)loaded);
    cJSON_AddNumberToObject(v, "managers", (double)w->manager_count);
    cJSON_AddNumberToObject(v, "systems", (double)w->system_count);
    cJSON_AddNumberToObject(v, "uptime_s", (double)(host_now_ns() - in->start_ns) / 1e9);
    cJSON_AddBoolToObject(v, "read_only", in->read_only);
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

static cJSON *plugins_json(host_inspector *in)
{
    host_world *w = in->w;
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < w->plugin_count; i++) {
        const host_plugin *p = w->plugins[i];
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
        for (size_t m = 0; m < w->manager_count; m++)
            if (w->managers[m]->owner == p)
                cJSON_AddItemToArray(mgrs, cJSON_CreateString(w->managers[m]->name));
        cJSON *apis = cJSON_AddArrayToObject(v, "apis");
        for (size_t a = 0; a < p->api_count; a++)
            cJSON_AddItemToArray(apis, cJSON_CreateString(p->api_names[a]));
        cJSON *deps = cJSON_AddArrayToObject(v, "dependencies");
        for (char **d = p->deps; d && *d; d++) cJSON_AddItemToArray(deps, cJSON_CreateString(*d));
        for (size_t u = 0; u < p->use_count; u++)
            cJSON_AddItemToArray(deps, cJSON_CreateString(p->uses[u].name));
        cJSON *hist = cJSON_AddArrayToObject(v, "reloads"); /* oldest first, the last 8 */
        uint32_t kept = p->reload_count < 8 ? p->reload_count : 8;
        for (uint32_t k = p->reload_count - kept; k < p->reload_count; k++) {
            const struct host_reload_note *rn = &p->reloads[k % 8];
            cJSON *h = cJSON_CreateObject();
            cJSON_AddNumberToObject(h, "time", rn->time);
            cJSON_AddBoolToObject(h, "done", rn->done);
            cJSON_AddStringToObject(h, "what", rn->what);
            cJSON_AddItemToArray(hist, h);
        }
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

static cJSON *schedule_json(host_inspector *in)
{
    host_world *w = in->w;
    cJSON *v = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(v, "steps");
    host_step *rows = malloc((w->manager_count + w->system_count + 1) * sizeof *rows);
    size_t n = rows ? host_schedule_all(w, rows) : 0;
    double frame_total = (double)w->timed_frames_ns; /* the frames the steps were timed in */
    for (size_t i = 0; i < n; i++) {
        const host_manager *m = rows[i].m;
        const host_system *s = rows[i].s;
        const host_timing *t = m ? &m->timing : &s->timing;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", m ? m->name : s->name);
        cJSON_AddStringToObject(o, "plugin", m ? m->owner->name : s->owner->name);
        cJSON_AddStringToObject(o, "kind", m ? "manager" : "system");
        if (m && m->desc.count)
            cJSON_AddNumberToObject(o, "components", m->desc.count(m->desc.state));
        else if (!m) {
            const host_collection *c = host_collections_get(&w->collections, s->collection);
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
        cJSON_AddNumberToObject(o, "share",
                                frame_total > 0 ? (double)t->total_ns / frame_total : 0.0);
        cJSON_AddItemToArray(steps, o);
    }
    free(rows);
    const host_timing *f = &w->frame_timing;
    cJSON_AddNumberToObject(v, "frame_mean_us", host_timing_mean(f) / 1e3);
    cJSON_AddNumberToObject(v, "frame_p99_us", (double)host_timing_quantile(f, 0.99) / 1e3);
    cJSON *frames = cJSON_AddArrayToObject(v, "frames_us"); /* oldest first */
    for (uint32_t i = 0; i < in->frame_n; i++) {
        uint32_t at = (in->frame_at + FRAME_RING - in->frame_n + i) % FRAME_RING;
        cJSON_AddItemToArray(frames, cJSON_CreateNumber(in->frame_us[at]));
    }
    return v;
}

/* The JSON array of entities list[0..n), as the scene writer writes them. */
static cJSON *entities_of(host_world *w, const ecs_entity *list, uint32_t n)
{
    size_t len = 0;
    char *text = host_scene_entities_text(w, list, n, &len);
    cJSON *v = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    return v;
}

/* One item of the entity list from its scene object (full: with its components as
 * "data"). */
static cJSON *entity_item(ecs_entity e, const cJSON *obj, bool full)
{
    char id[32];
    id_text(e, id, sizeof id);
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "id", id);
    cJSON_AddNumberToObject(v, "raw", e.id);
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(obj, "id");
    cJSON_AddStringToObject(v, "scene_id", cJSON_IsString(sid) ? sid->valuestring : "");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "debug_name");
    cJSON_AddStringToObject(v, "name", cJSON_IsString(name) ? name->valuestring : "");
    cJSON *comps = cJSON_AddArrayToObject(v, "components");
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
    {
        if (strcmp(c->string, "id")) cJSON_AddItemToArray(comps, cJSON_CreateString(c->string));
    }
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(obj, "transform");
    const cJSON *parent = cJSON_GetObjectItemCaseSensitive(tf, "parent");
    if (cJSON_IsString(parent))
        cJSON_AddStringToObject(v, "parent", parent->valuestring);
    else
        cJSON_AddNullToObject(v, "parent");
    if (full) {
        cJSON *data = cJSON_Duplicate(obj, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(data, "id");
        cJSON_AddItemToObject(v, "data", data);
    }
    return v;
}

static bool contains_folded(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return n == 0;
}

static long query_long(struct MHD_Connection *c, const char *key, long fallback, long max)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
    char *end;
    if (!s || !*s) return fallback;
    long v = strtol(s, &end, 10);
    if (*end || v < 0) return -1;
    return v > max ? max : v;
}

#define CHUNK 1024u

static enum MHD_Result entity_page(host_inspector *in, struct MHD_Connection *c)
{
    host_world *w = in->w;
    long offset = query_long(c, "offset", 0, 1L << 30),
         limit = query_long(c, "limit", PAGE_DEFAULT, PAGE_MAX);
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    const char *full = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "full");
    if (offset < 0 || limit < 0)
        return reply_error(c, 400, "offset and limit are numbers from 0 (limit at most 1000)");
    cJSON *v = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(v, "items");
    if (limit == 0 && !(name && *name)) { /* only the count */
        cJSON_AddNumberToObject(v, "offset", (double)offset);
        cJSON_AddNumberToObject(v, "total", host_entities_live(w->entities));
        return reply_json(c, 200, v);
    }
    ecs_entity chunk[CHUNK];
    uint32_t from = 0, n;
    long matched = 0, skipped = 0;
    bool filter = name && *name;
    if (!filter) from = host_entities_skip_live(w->entities, 0, (uint64_t)offset), skipped = offset;
    do { /* a chunk of live entities at a time; without a filter only the page's */
        n = 0;
        ecs_entity e;
        while (n < CHUNK && host_entities_next_live(w->entities, from, &e)) {
            from = ecs_entity_index(e) + 1;
            if (!filter && skipped < offset) {
                skipped++;
                continue;
            }
            chunk[n++] = e;
            if (!filter && (long)n >= limit) break;
        }
        if (!n) break;
        cJSON *objs = entities_of(w, chunk, n);
        if (!objs) {
            cJSON_Delete(v);
            return reply_error(c, 500, "a manager could not save its components (see the log)");
        }
        const cJSON *obj = objs->child;
        for (uint32_t i = 0; i < n && obj; i++, obj = obj->next) {
            if (filter) {
                const cJSON *sid = cJSON_GetObjectItemCaseSensitive(obj, "id");
                const cJSON *dn = cJSON_GetObjectItemCaseSensitive(obj, "debug_name");
                if (!(cJSON_IsString(sid) && contains_folded(sid->valuestring, name)) &&
                    !(cJSON_IsString(dn) && contains_folded(dn->valuestring, name)))
                    continue;
                if (matched++ < offset || cJSON_GetArraySize(items) >= limit) continue;
            }
            cJSON_AddItemToArray(items, entity_item(chunk[i], obj, full && !strcmp(full, "1")));
        }
        cJSON_Delete(objs);
    } while (filter || cJSON_GetArraySize(items) < limit);
    cJSON_AddNumberToObject(v, "offset", (double)offset);
    cJSON_AddNumberToObject(v, "total", filter ? (double)matched : host_entities_live(w->entities));
    return reply_json(c, 200, v);
}

/* {"id", "scene_id", "components": {manager: value}} of a live e. */
static cJSON *entity_json(host_world *w, ecs_entity e)
{
    cJSON *objs = entities_of(w, &e, 1), *obj = cJSON_DetachItemFromArray(objs, 0);
    cJSON_Delete(objs);
    if (!obj) return NULL;
    char id[32];
    id_text(e, id, sizeof id);
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "id", id);
    cJSON *sid = cJSON_DetachItemFromObjectCaseSensitive(obj, "id");
    cJSON_AddItemToObject(v, "scene_id", sid ? sid : cJSON_CreateString(""));
    cJSON_AddItemToObject(v, "components", obj);
    return v;
}

/* ---- writes ---- */

static enum MHD_Result create_entity(host_inspector *in, struct MHD_Connection *c, request *r)
{
    char err[800];
    cJSON *obj = host_json_parse("body", r->body ? r->body : "", r->len, err, sizeof err);
    if (!obj) return reply_error(c, 400, err);
    bool is_obj = cJSON_IsObject(obj);
    cJSON_Delete(obj);
    if (!is_obj) return reply_error(c, 400, "body: expected an entity object, as in a scene file");
    obj = host_json_parse("body", r->body, r->len, err, sizeof err);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    ecs_entity taken =
        cJSON_IsString(id) ? host_scene_entity_named(in->w, id->valuestring) : ecs_entity_null();
    char why[400], tid[32];
    if (!ecs_entity_is_null(taken)) {
        id_text(taken, tid, sizeof tid);
        host_format(why, sizeof why, "id: '%s' is the id of entity %s already", id->valuestring,
                    tid);
    }
    cJSON_Delete(obj);
    if (!ecs_entity_is_null(taken)) return reply_error(c, 409, why);
    size_t len = r->len + 64;
    char *doc = malloc(len);
    if (!doc) return reply_error(c, 500, "out of memory");
    int n = snprintf(doc, len, "{\"version\": 1, \"entities\": [\n%.*s\n]}", (int)r->len, r->body);
    ecs_entity made = ecs_entity_null();
    ecs_status s = host_scene_load_text(in->w, "body", doc, (size_t)n, &made, err, sizeof err);
    free(doc);
    if (s != ECS_OK) return reply_error(c, 400, err);
    cJSON *v = entity_json(in->w, made);
    return v ? reply_json(c, 201, v) : reply_error(c, 500, "the new entity could not be read");
}

static enum MHD_Result save_world(host_inspector *in, struct MHD_Connection *c, request *r)
{
    char err[800], resolved[4096];
    cJSON *body = host_json_parse("body", r->body ? r->body : "", r->len, err, sizeof err);
    if (!body) return reply_error(c, 400, err);
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(body, "path");
    if (!cJSON_IsString(path) || !*path->valuestring) {
        cJSON_Delete(body);
        return reply_error(c, 400, "body: expected {\"path\": \"FILE\"}");
    }
    enum MHD_Result ok;
    if (host_scene_check_target(path->valuestring, resolved, sizeof resolved, err, sizeof err) !=
        ECS_OK) {
        ok = reply_error(c, 400, err);
    } else if (host_scene_save(in->w, path->valuestring) != ECS_OK) {
        ok = reply_error(c, 500, "the save failed (the log says why); the old file is as it was");
    } else {
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "saved", path->valuestring);
        ok = reply_json(c, 200, v);
    }
    cJSON_Delete(body);
    return ok;
}

/* The world as a scene file: saved to a temporary file, sent, removed. */
static enum MHD_Result download_scene(host_inspector *in, struct MHD_Connection *c)
{
    char dir[] = "/tmp/ecs-inspect-XXXXXX", path[64], err[300];
    if (!mkdtemp(dir)) return reply_error(c, 500, strerror(errno));
    snprintf(path, sizeof path, "%s/scene.json", dir);
    size_t len = 0;
    char *text = host_scene_save(in->w, path) == ECS_OK
                     ? host_json_read_text(path, &len, err, sizeof err)
                     : NULL;
    unlink(path);
    rmdir(dir);
    if (!text) return reply_error(c, 500, "the world could not be saved (the log says why)");
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) return free(text), MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"scene.json\"");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ok = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ok;
}

static cJSON *log_json(host_inspector *in, uint64_t since)
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
static enum MHD_Result events(host_inspector *in, struct MHD_Connection *c)
{
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    uint64_t since = last && *last ? strtoull(last, NULL, 10) + 1 : 0;
    if (!last || !*last) {
        long s = query_long(c, "since", 0, 1L << 62);
        since = s < 0 ? 0 : (uint64_t)s;
    }
    cJSON *lines = log_json(in, since), *l;
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
            char *bigger = realloc(out, cap = need * 2);
            if (!bigger) break;
            out = bigger;
        }
        if (data)
            len += (size_t)snprintf(out + len, cap - len, "id: %.0f\nevent: %s\ndata: %s\n\n",
                                    cJSON_GetObjectItemCaseSensitive(l, "seq")->valuedouble,
                                    strcmp(who, "reload") ? "log" : "reload", data);
        free(data);
    }
    cJSON_Delete(lines);
    cJSON *frame = world_json(in);
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
    return reply_text(c, 200, "text/event-stream", out, len);
}

/* ---- routing ---- */

/* Is the Host header the bound address or localhost (with our port, or none)? */
static bool host_ok(const host_inspector *in, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h) return false;
    char port[16];
    snprintf(port, sizeof port, ":%u", in->port);
    const char *names[] = {"localhost", "127.0.0.1", in->addr};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(h, names[i], n) == 0 && (!h[n] || strcmp(h + n, port) == 0)) return true;
    }
    return false;
}

static bool token_ok(const host_inspector *in, struct MHD_Connection *c)
{
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    return a && strncmp(a, "Bearer ", 7) == 0 && strcmp(a + 7, in->token) == 0;
}

static enum MHD_Result route(host_inspector *in, struct MHD_Connection *c, const char *url,
                             const char *method, request *r)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST"),
         put = !strcmp(method, "PUT"), del = !strcmp(method, "DELETE");
    if (!host_ok(in, c)) return reply_error(c, 403, "the Host header must name this server");
    if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
        if (!get) return reply_error(c, 405, "the page is read with GET");
        char *page = strdup(host_inspect_page);
        return page ? reply_text(c, 200, "text/html; charset=utf-8", page, strlen(page)) : MHD_NO;
    }
    if (strncmp(url, "/api/", 5) != 0) return reply_error(c, 404, "no such page");
    /* a browser's EventSource cannot send headers: /api/events may carry ?token= */
    const char *qt = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    bool query_token = !strcmp(url, "/api/events") && qt && !strcmp(qt, in->token);
    if (!token_ok(in, c) && !query_token)
        return reply_error(c, 403, "a request needs the header Authorization: Bearer TOKEN");
    if (r->too_big) return reply_error(c, 413, "the request body is over 1 MiB");
    const char *p = url + 5;
    if ((post || put || del) && in->read_only)
        return reply_error(c, 403, "the inspector is read-only (--inspect-read-only)");
    if (!strcmp(p, "world"))
        return get ? reply_json(c, 200, world_json(in)) : reply_error(c, 405, "GET only");
    if (!strcmp(p, "plugins"))
        return get ? reply_json(c, 200, plugins_json(in)) : reply_error(c, 405, "GET only");
    if (!strcmp(p, "schedule"))
        return get ? reply_json(c, 200, schedule_json(in)) : reply_error(c, 405, "GET only");
    if (!strcmp(p, "log")) {
        long since = query_long(c, "since", 0, 1L << 62);
        return get ? reply_json(c, 200, log_json(in, since < 0 ? 0 : (uint64_t)since))
                   : reply_error(c, 405, "GET only");
    }
    if (!strcmp(p, "scene")) return get ? download_scene(in, c) : reply_error(c, 405, "GET only");
    if (!strcmp(p, "events")) return get ? events(in, c) : reply_error(c, 405, "GET only");
    if (!strcmp(p, "save")) return post ? save_world(in, c, r) : reply_error(c, 405, "POST only");
    if (!strcmp(p, "entities")) {
        if (get) return entity_page(in, c);
        if (post) return create_entity(in, c, r);
        return reply_error(c, 405, "GET or POST");
    }
    if (strncmp(p, "entities/", 9) != 0) return reply_error(c, 404, "no such API");
    const char *id = p + 9, *slash = strchr(id, '/');
    ecs_entity e;
    if (!parse_id(id, slash ? (size_t)(slash - id) : strlen(id), &e))
        return reply_error(c, 404, "an entity id is INDEX.GENERATION, as the list gives it");
    if (!host_entity_alive(in->w->entities, e))
        return reply_error(c, 404, "no such entity: it is not alive (destroyed, or a stale id)");
    if (!slash) {
        if (get) {
            cJSON *v = entity_json(in->w, e);
            return v ? reply_json(c, 200, v)
                     : reply_error(c, 500, "its components could not be read");
        }
        if (del) {
            host_entity_destroy(in->w->entities, e);
            host_world_announce_destroyed(in->w);
            cJSON *v = cJSON_CreateObject();
            cJSON_AddBoolToObject(v, "destroyed", true);
            return reply_json(c, 200, v);
        }
        return reply_error(c, 405, "GET or DELETE");
    }
    if (!put) return reply_error(c, 405, "a component is replaced with PUT");
    char err[800];
    ecs_status s =
        host_scene_edit(in->w, e, slash + 1, r->body ? r->body : "", r->len, err, sizeof err);
    if (s == ECS_ERR_NOT_FOUND && !strncmp(err, "no manager", 10)) return reply_error(c, 404, err);
    if (s != ECS_OK) return reply_error(c, s == ECS_ERR_UNSUPPORTED ? 405 : 400, err);
    host_info("inspect", "entity %u.%u: %s replaced", ecs_entity_index(e), ecs_entity_generation(e),
              slash + 1);
    cJSON *v = entity_json(in->w, e);
    return v ? reply_json(c, 200, v) : reply_error(c, 500, "its components could not be read");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    request *r = *con_cls;
    if (!r) { /* the headers: the body (if any) comes in the next calls */
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big || r->len + n > BODY_LIMIT) {
            r->too_big = true;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < r->len + n + 1) cap *= 2;
            char *b = realloc(r->body, cap);
            if (!b) return MHD_NO;
            r->body = b;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    return route(cls, c, url, method, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)c, (void)why;
    request *r = *con_cls;
    if (r) free(r->body);
    free(r);
    *con_cls = NULL;
}

static void on_mhd_error(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) msg[--n] = '\0';
    host_detail("inspect", "%s", msg);
}

/* ---- life ---- */

host_inspector *host_inspector_new(host_world *w, const char *spec, bool read_only)
{
    char addr[INET_ADDRSTRLEN] = "127.0.0.1", *end;
    const char *colon = strrchr(spec, ':'), *port_text = colon ? colon + 1 : spec;
    if (colon && (size_t)(colon - spec) >= sizeof addr) {
        host_error("inspect", "--inspect %s: the address is too long", spec);
        return NULL;
    }
    if (colon) snprintf(addr, sizeof addr, "%.*s", (int)(colon - spec), spec);
    unsigned long port = strtoul(port_text, &end, 10);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (!*port_text || *end || port > 65535 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        host_error("inspect",
                   "--inspect %s: expected PORT or ADDRESS:PORT (an IPv4 address, port 0 to "
                   "65535)",
                   spec);
        return NULL;
    }
    host_inspector *in = calloc(1, sizeof *in);
    unsigned char raw[16];
    if (!in || getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        host_error("inspect", "cannot make a token: %s", in ? strerror(errno) : "no memory");
        free(in);
        return NULL;
    }
    for (size_t i = 0; i < sizeof raw; i++) snprintf(in->token + 2 * i, 3, "%02x", raw[i]);
    in->w = w;
    in->read_only = read_only;
    in->start_ns = in->rate_t0 = host_now_ns();
    snprintf(in->addr, sizeof in->addr, "%s", addr);
    in->d = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, in, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, in,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, in, MHD_OPTION_END);
    const union MHD_DaemonInfo *fd =
        in->d ? MHD_get_daemon_info(in->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    const union MHD_DaemonInfo *pi =
        in->d ? MHD_get_daemon_info(in->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!in->d || !fd || !pi) {
        host_error("inspect", "cannot serve on %s:%lu: %s", addr, port,
                   errno ? strerror(errno) : "libmicrohttpd failed");
        if (in->d) MHD_stop_daemon(in->d);
        free(in);
        return NULL;
    }
    in->epoll_fd = fd->epoll_fd;
    in->port = pi->port;
    if (strcmp(addr, "127.0.0.1") != 0)
        host_warn("inspect",
                  "serving on %s, not only this machine: anyone who can reach it and has the "
                  "token can change the world",
                  addr);
    host_log_set_listener(on_log, in);
    host_info("inspect", "open http://%s:%u/#token=%s%s",
              strcmp(addr, "0.0.0.0") ? addr : "127.0.0.1", in->port, in->token,
              read_only ? " (read-only)" : "");
    return in;
}

void host_inspector_free(host_inspector *in)
{
    if (!in) return;
    host_log_set_listener(NULL, NULL);
    MHD_stop_daemon(in->d);
    for (size_t i = 0; i < LOG_RING; i++) free(in->ring[i].who), free(in->ring[i].msg);
    free(in->marks);
    free(in);
}

unsigned host_inspector_port(const host_inspector *in)
{
    return in->port;
}

const char *host_inspector_token(const host_inspector *in)
{
    return in->token;
}

void host_inspector_poll(host_inspector *in, bool answer)
{
    host_world *w = in->w;
    const host_timing *f = &w->frame_timing;
    if (f->count > in->last_count) { /* the frames since the last call */
        float us = (float)((double)(f->total_ns - in->last_total_ns) /
                           (double)(f->count - in->last_count) / 1e3);
        in->frame_us[in->frame_at] = us;
        in->frame_at = (in->frame_at + 1) % FRAME_RING;
        if (in->frame_n < FRAME_RING) in->frame_n++;
        in->last_total_ns = f->total_ns;
        in->last_count = f->count;
    }
    uint64_t now = host_now_ns();
    if (now - in->rate_t0 >= 500000000ull) { /* the rate over the last half second or more */
        in->fps = (double)(w->frame.frame - in->rate_frame0) * 1e9 / (double)(now - in->rate_t0);
        in->rate_t0 = now;
        in->rate_frame0 = w->frame.frame;
    }
    if (answer) MHD_run(in->d);
}

void host_inspector_wait(host_inspector *in, uint64_t deadline_ns, volatile int *stop)
{
    MHD_run(in->d); /* what waits now, even when the frames run late and there is no time */
    for (;;) {
        uint64_t now = host_now_ns();
        if (now >= deadline_ns || (stop && *stop)) return;
        uint64_t wait = deadline_ns - now;
        MHD_UNSIGNED_LONG_LONG mhd_ms;
        if (MHD_get_timeout(in->d, &mhd_ms) == MHD_YES && mhd_ms * 1000000ull < wait)
            wait = mhd_ms * 1000000ull;
        struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
        struct pollfd p = {in->epoll_fd, POLLIN, 0};
        int n = ppoll(&p, 1, &ts, NULL);
        if (n != 0)
            MHD_run(in->d); /* a request (or a signal: nothing to do) */
        else if (wait < deadline_ns - now)
            MHD_run(in->d); /* its own timeout */
    }
}
