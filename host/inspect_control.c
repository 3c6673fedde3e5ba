/* SPDX-License-Identifier: MIT */
/* inspect_control.c: the inspector's frame controls (docs/inspector.md, "Controls"): pause,
 * resume, step, the time scale, snapshots kept in memory under names, restoring one, the
 * live loop. Every answer is the controls' state as GET /api/control gives it, so the page
 * redraws from what it gets back. The work is the session's (control.h); this file only
 * reads requests and writes answers.
 *
 *   GET  /api/control                  the state
 *   POST /api/control                  {"pause": true|false} | {"step": N} | {"time_scale": X}
 *   POST /api/snapshots                {"name": "before-jump"}: a snapshot now, kept
 *   POST /api/snapshots/NAME/restore   the world back to it (the loop stops)
 *   DELETE /api/snapshots/NAME         drop it
 *   POST /api/loop                     {"snapshot": NAME (optional), "frames": K}
 *   DELETE /api/loop                   stop looping
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "inspect_int.h"
#include "json.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

static cJSON *loop_json(const host_control *ctl)
{
    const host_loop *l = &ctl->loop;
    if (l->from < 0) return cJSON_CreateNull();
    cJSON *v = cJSON_CreateObject();
    cJSON_AddNumberToObject(v, "from", (double)l->from);
    cJSON_AddNumberToObject(v, "to", (double)l->to);
    cJSON_AddNumberToObject(v, "passes", (double)l->passes);
    cJSON_AddStringToObject(v, "said", l->said);
    return v;
}

cJSON *inspect_control_json(host_inspector *in)
{
    const host_control *ctl = in->control;
    const host_session *hs = in->hs;
    cJSON *v = cJSON_CreateObject(), *list = cJSON_CreateArray();
    cJSON_AddBoolToObject(v, "paused", ctl->paused);
    cJSON_AddNumberToObject(v, "frame", (double)hs->world->frame.frame);
    cJSON_AddNumberToObject(v, "time_scale", ctl->time_scale);
    if (hs->world->fixed_dt > 0)
        cJSON_AddNumberToObject(v, "fixed_dt_ms", hs->world->fixed_dt * 1e3);
    else
        cJSON_AddNullToObject(v, "fixed_dt_ms");
    cJSON_AddNumberToObject(v, "seed", (double)hs->world->seed);
    cJSON_AddItemToObject(v, "loop", loop_json(ctl));
    for (size_t i = 0; i < ctl->kept_count; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "name", ctl->kept[i].name);
        cJSON_AddNumberToObject(k, "frame", (double)ctl->kept[i].snap.frame);
        cJSON_AddNumberToObject(k, "bytes", (double)ctl->kept[i].snap.size);
        cJSON_AddItemToArray(list, k);
    }
    cJSON_AddItemToObject(v, "snapshots", list);
    cJSON_AddNumberToObject(v, "held_bytes", (double)host_control_bytes(ctl));
    return v;
}

/* The request's body as a JSON object into *body; false with the reply made in *res. */
static bool body_object(struct MHD_Connection *c, request *r, cJSON **body, enum MHD_Result *res)
{
    char err[400];
    *body =
        host_json_parse("body", r->body ? r->body : "{}", r->body ? r->len : 2, err, sizeof err);
    if (*body && cJSON_IsObject(*body)) return true;
    cJSON_Delete(*body);
    *res = inspect_reply_error(c, 400, *body ? "body: expected an object" : err);
    return false;
}

/* POST /api/control: exactly one of pause, step, time_scale. */
static enum MHD_Result post_control(host_inspector *in, struct MHD_Connection *c, request *r)
{
    cJSON *b;
    enum MHD_Result res;
    if (!body_object(c, r, &b, &res)) return res;
    const cJSON *pause = cJSON_GetObjectItemCaseSensitive(b, "pause");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(b, "step");
    const cJSON *scale = cJSON_GetObjectItemCaseSensitive(b, "time_scale");
    char why[200] = "";
    if (cJSON_GetArraySize(b) != 1)
        snprintf(why, sizeof why, "give one of \"pause\", \"step\", \"time_scale\"");
    else if (pause && cJSON_IsBool(pause))
        host_control_pause(in->control, cJSON_IsTrue(pause));
    else if (step && cJSON_IsNumber(step) && step->valuedouble >= 1 && step->valuedouble <= 1e6 &&
             step->valuedouble == (double)(uint64_t)step->valuedouble)
        host_control_step(in->control, (uint64_t)step->valuedouble);
    else if (scale && cJSON_IsNumber(scale))
        (void)host_control_set_scale(in->control, scale->valuedouble, why, sizeof why);
    else
        snprintf(why, sizeof why,
                 "\"pause\" is true or false, \"step\" a whole number from 1 to "
                 "1000000, \"time_scale\" a number");
    cJSON_Delete(b);
    return *why ? inspect_reply_error(c, 400, why)
                : inspect_reply_json(c, 200, inspect_control_json(in));
}

/* The answer to a snapshot call that returned s (why: its reason). */
static enum MHD_Result answer(host_inspector *in, struct MHD_Connection *c, ecs_status s,
                              const char *why)
{
    if (s == ECS_OK) return inspect_reply_json(c, 200, inspect_control_json(in));
    unsigned code = s == ECS_ERR_NOT_FOUND ? 404
                    : s == ECS_ERR_INVALID_ARGUMENT || s == ECS_ERR_ABI || s == ECS_ERR_BAD_VALUE
                        ? 409
                        : 500;
    if (s == ECS_ERR_INVALID_ARGUMENT) code = 400;
    return inspect_reply_error(c, code, why);
}

static enum MHD_Result post_snapshot(host_inspector *in, struct MHD_Connection *c, request *r)
{
    cJSON *b;
    enum MHD_Result res;
    if (!body_object(c, r, &b, &res)) return res;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "name");
    char why[600] = "", auto_name[32];
    snprintf(auto_name, sizeof auto_name, "frame-%llu",
             (unsigned long long)in->hs->world->frame.frame);
    ecs_status s =
        name && !cJSON_IsString(name)
            ? (snprintf(why, sizeof why, "\"name\" is a string"), ECS_ERR_INVALID_ARGUMENT)
            : host_control_snapshot(in->control, name ? name->valuestring : auto_name, why,
                                    sizeof why);
    cJSON_Delete(b);
    return answer(in, c, s, why);
}

/* /api/snapshots/NAME[/restore]. */
static enum MHD_Result snapshot_item(host_inspector *in, struct MHD_Connection *c,
                                     const char *method, const char *rest)
{
    char name[HOST_CONTROL_NAME_MAX + 16], why[600] = "";
    const char *slash = strchr(rest, '/');
    size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
    if (n == 0 || n >= HOST_CONTROL_NAME_MAX)
        return inspect_reply_error(c, 404, "no such snapshot");
    memcpy(name, rest, n), name[n] = '\0';
    bool changed = false;
    if (slash && !strcmp(slash, "/restore")) {
        if (strcmp(method, "POST")) return inspect_reply_error(c, 405, "POST only");
        ecs_status s = host_control_restore(in->control, name, &changed, why, sizeof why);
        if (s != ECS_OK && !changed && s != ECS_ERR_NOT_FOUND)
            strncat(why, " (the world is as it was)", sizeof why - strlen(why) - 1);
        return answer(in, c, s, why);
    }
    if (slash) return inspect_reply_error(c, 404, "no such API");
    if (strcmp(method, "DELETE")) return inspect_reply_error(c, 405, "DELETE only");
    ecs_status s = host_control_drop(in->control, name);
    return answer(in, c, s, "no such snapshot");
}

static enum MHD_Result post_loop(host_inspector *in, struct MHD_Connection *c, request *r)
{
    cJSON *b;
    enum MHD_Result res;
    if (!body_object(c, r, &b, &res)) return res;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "snapshot");
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(b, "frames");
    char why[600] = "";
    ecs_status s = ECS_ERR_INVALID_ARGUMENT;
    if ((name && !cJSON_IsString(name)) || !cJSON_IsNumber(frames) || frames->valuedouble < 1 ||
        frames->valuedouble > 1e9)
        snprintf(why, sizeof why, "{\"frames\": K (1 or more), \"snapshot\": NAME (optional)}");
    else
        s = host_control_loop(in->control, name ? name->valuestring : NULL,
                              (uint64_t)frames->valuedouble, why, sizeof why);
    cJSON_Delete(b);
    return answer(in, c, s, why);
}

enum MHD_Result inspect_route_control(host_inspector *in, struct MHD_Connection *c, request *r,
                                      const char *method, const char *p)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!in->control) return inspect_reply_error(c, 404, "no frame controls in this host");
    if (!strcmp(p, "control")) {
        if (get) return inspect_reply_json(c, 200, inspect_control_json(in));
        return post ? post_control(in, c, r) : inspect_reply_error(c, 405, "GET or POST");
    }
    if (!strcmp(p, "snapshots")) {
        if (get) return inspect_reply_json(c, 200, inspect_control_json(in));
        return post ? post_snapshot(in, c, r) : inspect_reply_error(c, 405, "GET or POST");
    }
    if (!strncmp(p, "snapshots/", 10)) return snapshot_item(in, c, method, p + 10);
    if (post) return post_loop(in, c, r);
    if (strcmp(method, "DELETE")) return inspect_reply_error(c, 405, "POST or DELETE");
    host_control_loop_stop(in->control);
    return inspect_reply_json(c, 200, inspect_control_json(in));
}
