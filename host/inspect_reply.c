/* SPDX-License-Identifier: MIT */
/* inspect_reply.c: what every part of the inspector answers with (inspect_int.h): the
 * headers every reply carries, text, JSON and error replies, numeric query arguments, and
 * a request taken on as a job sliced across frames. The router (inspect.c) and the parts
 * (inspect_api.c, inspect_index.c, inspect_view.c, inspect_control.c) call these; these
 * call none of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_int.h"
#include "inspect_page.h" /* HOST_INSPECT_PAGE_SCRIPTS: the page's scripts' hashes */

/* The page's own scripts (their hashes, made by scripts/embed.py) and nothing else; no
 * frame may hold it (a page of another site cannot put it under a click); what it loads
 * and connects to: this server only. */
#define CSP                                                                                        \
    "default-src 'none'; script-src " HOST_INSPECT_PAGE_SCRIPTS "; style-src 'unsafe-inline'; "    \
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "                     \
    "frame-ancestors 'none'"

void inspect_headers(struct MHD_Response *r, const char *type)
{
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "X-Frame-Options", "DENY"); /* browsers before frame-ancestors */
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

enum MHD_Result inspect_reply_text(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    inspect_headers(r, type);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

enum MHD_Result inspect_reply_json(struct MHD_Connection *c, unsigned status, cJSON *v)
{
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    if (!text) return MHD_NO;
    return inspect_reply_text(c, status, "application/json", text, strlen(text));
}

enum MHD_Result inspect_reply_error(struct MHD_Connection *c, unsigned status, const char *msg)
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
    return inspect_reply_json(c, status, v);
}

long inspect_query_long(struct MHD_Connection *c, const char *key, long fallback, long max)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
    char *end;
    if (!s || !*s) return fallback;
    long v = strtol(s, &end, 10);
    if (*end || v < 0) return -1;
    return v > max ? max : v;
}

/* ---- jobs ---- */

enum MHD_Result inspect_job_start(host_inspector *in, struct MHD_Connection *c, request *r,
                                  inspect_job *j)
{
    j->c = c;
    j->start_ns = host_now_ns();
    j->frame0 = in->hs->world->frame.frame;
    r->job = j;
    MHD_suspend_connection(c);
    if (in->jobs_last)
        in->jobs_last->next = j;
    else
        in->jobs = j;
    in->jobs_last = j;
    return MHD_YES;
}
