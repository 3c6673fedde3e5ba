/* SPDX-License-Identifier: MIT */
/* inspect.c: the inspector's server (inspect.h, inspect_int.h, docs/inspector.md).
 *
 * libmicrohttpd in its "external select" mode with epoll: the daemon has no thread; the
 * frame loop runs it (MHD_run) at frame boundaries and while it waits for the next frame.
 * Every request passes the Host and token checks, then is routed to an answer made at once
 * (inspect_api.c) or to a job: work that walks the world (a search of 4 M names) is done
 * in slices of at most SLICE_NS, one at each frame boundary and more while the loop waits
 * for the next frame, its connection suspended meanwhile, so that no request costs a frame
 * more than a slice. Jobs are served oldest first; one whose client hung up is dropped.
 */
#include "inspect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "inspect_int.h"
#include "inspect_page.h" /* host_inspect_page: the page, built from inspect_page.html */
#include "log.h"

#define BODY_LIMIT     (1u << 20) /* a request body over 1 MiB: 413 */
#define SLICE_NS       1000000u   /* a job's slice: at most this long at a frame boundary */
#define WAIT_MARGIN_NS 250000u    /* while waiting, a slice ends this long before the frame */
#define MIN_WAIT_SLICE 100000u    /* a shorter slice than this is not worth starting */

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

enum MHD_Result inspect_reply_text(struct MHD_Connection *c, unsigned status, const char *type,
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
    j->frame0 = in->w->frame.frame;
    r->job = j;
    MHD_suspend_connection(c);
    if (in->jobs_last)
        in->jobs_last->next = j;
    else
        in->jobs = j;
    in->jobs_last = j;
    return MHD_YES;
}

/* Has j's client hung up (the page cancelled a request a newer one made useless)? */
static bool client_gone(inspect_job *j)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(j->c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    struct pollfd p = {ci->connect_fd, POLLRDHUP, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Take the first job off the list (it is done): its connection goes on. */
static void job_finish(host_inspector *in, inspect_job *j)
{
    in->jobs = j->next;
    if (!in->jobs) in->jobs_last = NULL;
    j->next = NULL;
    j->done = true;
    MHD_resume_connection(j->c);
}

typedef struct slice_call {
    host_inspector *in;
    inspect_job *j;
    uint64_t until;
    bool done;
} slice_call;

static void call_step(void *arg)
{
    slice_call *s = arg;
    s->done = s->j->kind->step(s->in, s->j, s->until);
}

/* One slice of the oldest job, until `until`. */
static void job_slice(host_inspector *in, uint64_t until)
{
    inspect_job *j = in->jobs;
    if (client_gone(j)) {
        host_detail("inspect", "a %s dropped after %u slices: its client hung up", j->kind->name,
                    j->slices);
        j->gone = true;
        job_finish(in, j);
        return;
    }
    slice_call s = {in, j, until, false};
    uint64_t t0 = host_now_ns();
    int sig = host_guard_run(call_step, &s); /* plugin code runs in it (names, components) */
    uint64_t t1 = host_now_ns();
    j->work_ns += t1 - t0;
    j->slices++;
    if (t1 - t0 > j->longest_ns) j->longest_ns = t1 - t0;
    host_world_trace_slice(in->w, j->kind->name, "inspect", t0, t1);
    if (sig && j->crashed) host_plugin_crashed(in->w, (host_plugin *)j->crashed, sig, j->crash_in);
    j->crash_sig = sig;
    if (sig || s.done) job_finish(in, j);
}

/* Serve the jobs, oldest first, until `until` (host_now_ns) or none is left. */
static void run_jobs(host_inspector *in, uint64_t until)
{
    while (in->jobs && host_now_ns() < until) job_slice(in, until);
}

/* The answer of a job that is done (its connection resumed). */
static enum MHD_Result job_answer(host_inspector *in, struct MHD_Connection *c, inspect_job *j)
{
    if (j->gone) return MHD_NO; /* nobody to answer: close */
    if (j->crash_sig) {
        char msg[300];
        host_format(msg, sizeof msg, "a plugin crashed with %s in %s while this was answered",
                    host_guard_signal_name(j->crash_sig), j->crash_in ? j->crash_in : "its code");
        return inspect_reply_error(c, 500, msg);
    }
    unsigned status = 200;
    cJSON *v = j->kind->answer(in, j, &status);
    if (!v) return inspect_reply_error(c, 500, "out of memory");
    double ms = (double)(host_now_ns() - j->start_ns) / 1e6;
    uint64_t frames = in->w->frame.frame - j->frame0;
    host_detail("inspect",
                "a %s answered in %.1f ms: %.1f ms of work in %u slices (the longest %.2f ms) over "
                "%llu frames",
                j->kind->name, ms, (double)j->work_ns / 1e6, j->slices, (double)j->longest_ns / 1e6,
                (unsigned long long)frames);
    if (cJSON_IsObject(v)) { /* what it cost: the page shows it */
        cJSON *cost = cJSON_AddObjectToObject(v, "cost");
        cJSON_AddNumberToObject(cost, "ms", ms);
        cJSON_AddNumberToObject(cost, "work_ms", (double)j->work_ns / 1e6);
        cJSON_AddNumberToObject(cost, "slices", j->slices);
        cJSON_AddNumberToObject(cost, "longest_slice_ms", (double)j->longest_ns / 1e6);
        cJSON_AddNumberToObject(cost, "frames", (double)frames);
    }
    return inspect_reply_json(c, status, v);
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

/* "INDEX.GENERATION" into *e: false when it is not one. */
static bool parse_id(const char *s, size_t n, ecs_entity *e)
{
    char text[32], *end;
    if (n == 0 || n >= sizeof text) return false;
    memcpy(text, s, n);
    text[n] = '\0';
    if (text[0] < '0' || text[0] > '9') return false;
    unsigned long idx = strtoul(text, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9') return false;
    unsigned long gen = strtoul(end + 1, &end, 10);
    if (*end || idx > ECS_ENTITY_MAX_INDEX || gen > ECS_ENTITY_GENERATION_MASK) return false;
    *e = ecs_entity_make((uint32_t)idx, (uint32_t)gen);
    return true;
}

/* /api/entities/{id}[/...]: the id checked, then inspect_entity. */
static enum MHD_Result route_entity(host_inspector *in, struct MHD_Connection *c, request *r,
                                    const char *method, const char *id)
{
    const char *slash = strchr(id, '/');
    ecs_entity e;
    if (!parse_id(id, slash ? (size_t)(slash - id) : strlen(id), &e))
        return inspect_reply_error(c, 404,
                                   "an entity id is INDEX.GENERATION, as the list gives it");
    if (!host_entity_alive(in->w->entities, e))
        return inspect_reply_error(c, 404,
                                   "no such entity: it is not alive (destroyed, or a stale id)");
    return inspect_entity(in, c, r, method, e, slash ? slash : "");
}

/* The /api/ paths that only read (GET); *routed false when p is not one of them. */
static enum MHD_Result route_read(host_inspector *in, struct MHD_Connection *c, const char *p,
                                  bool get, bool *routed)
{
    *routed = true;
    if (!strcmp(p, "world"))
        return get ? inspect_reply_json(c, 200, inspect_world_json(in))
                   : inspect_reply_error(c, 405, "GET only");
    if (!strcmp(p, "plugins"))
        return get ? inspect_reply_json(c, 200, inspect_plugins_json(in))
                   : inspect_reply_error(c, 405, "GET only");
    if (!strcmp(p, "schedule"))
        return get ? inspect_reply_json(c, 200, inspect_schedule_json(in))
                   : inspect_reply_error(c, 405, "GET only");
    if (!strcmp(p, "log")) {
        long since = inspect_query_long(c, "since", 0, 1L << 62);
        return get ? inspect_reply_json(c, 200,
                                        inspect_log_json(in, since < 0 ? 0 : (uint64_t)since))
                   : inspect_reply_error(c, 405, "GET only");
    }
    if (!strcmp(p, "scene"))
        return get ? inspect_download_scene(in, c) : inspect_reply_error(c, 405, "GET only");
    if (!strcmp(p, "events"))
        return get ? inspect_events(in, c) : inspect_reply_error(c, 405, "GET only");
    *routed = false;
    return MHD_NO;
}

static enum MHD_Result route(host_inspector *in, struct MHD_Connection *c, const char *url,
                             const char *method, request *r)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST"),
         put = !strcmp(method, "PUT") || !strcmp(method, "PATCH"), del = !strcmp(method, "DELETE");
    if (!host_ok(in, c))
        return inspect_reply_error(c, 403, "the Host header must name this server");
    if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
        if (!get) return inspect_reply_error(c, 405, "the page is read with GET");
        char *page = strdup(host_inspect_page);
        return page ? inspect_reply_text(c, 200, "text/html; charset=utf-8", page, strlen(page))
                    : MHD_NO;
    }
    if (strncmp(url, "/api/", 5) != 0) return inspect_reply_error(c, 404, "no such page");
    /* a browser's EventSource cannot send headers: /api/events may carry ?token= */
    const char *qt = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    bool query_token = !strcmp(url, "/api/events") && qt && !strcmp(qt, in->token);
    if (!token_ok(in, c) && !query_token)
        return inspect_reply_error(c, 403,
                                   "a request needs the header Authorization: Bearer TOKEN");
    if (r->too_big) return inspect_reply_error(c, 413, "the request body is over 1 MiB");
    const char *p = url + 5;
    if ((post || put || del) && in->read_only)
        return inspect_reply_error(c, 403, "the inspector is read-only (--inspect-read-only)");
    bool routed;
    enum MHD_Result res = route_read(in, c, p, get, &routed);
    if (routed) return res;
    if (!strcmp(p, "save"))
        return post ? inspect_save_world(in, c, r) : inspect_reply_error(c, 405, "POST only");
    if (!strcmp(p, "entities")) {
        if (get) return inspect_entity_page(in, c, r);
        if (post) return inspect_create_entity(in, c, r);
        return inspect_reply_error(c, 405, "GET or POST");
    }
    if (strncmp(p, "entities/", 9) != 0) return inspect_reply_error(c, 404, "no such API");
    return route_entity(in, c, r, method, p + 9);
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
    if (r->job) return r->job->done ? job_answer(cls, c, r->job) : MHD_YES;
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
    (void)c, (void)why;
    host_inspector *in = cls;
    request *r = *con_cls;
    if (r && r->job) {
        for (inspect_job **at = &in->jobs; *at; at = &(*at)->next) /* still listed: unlist */
            if (*at == r->job) {
                *at = r->job->next;
                break;
            }
        in->jobs_last = in->jobs;
        while (in->jobs_last && in->jobs_last->next) in->jobs_last = in->jobs_last->next;
        r->job->kind->free(r->job);
    }
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

/* spec ("PORT" or "ADDR:PORT") into *sa and addr; false with the reason logged. */
static bool parse_spec(const char *spec, struct sockaddr_in *sa, char *addr, size_t size)
{
    char *end;
    const char *colon = strrchr(spec, ':'), *port_text = colon ? colon + 1 : spec;
    snprintf(addr, size, "127.0.0.1");
    if (colon && (size_t)(colon - spec) >= size) {
        host_error("inspect", "--inspect %s: the address is too long", spec);
        return false;
    }
    if (colon) snprintf(addr, size, "%.*s", (int)(colon - spec), spec);
    unsigned long port = strtoul(port_text, &end, 10);
    *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (!*port_text || *end || port > 65535 || inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
        host_error("inspect",
                   "--inspect %s: expected PORT or ADDRESS:PORT (an IPv4 address, port 0 to "
                   "65535)",
                   spec);
        return false;
    }
    return true;
}

static struct MHD_Daemon *start_daemon(host_inspector *in, struct sockaddr_in *sa)
{
    return MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, in,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, in,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, in, MHD_OPTION_END);
}

bool host_inspector_save_dir_ok(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (stat(dir, &st) != 0) return host_format(why, len, "%s", strerror(errno)), false;
    if (!S_ISDIR(st.st_mode)) return host_format(why, len, "not a folder"), false;
    if (access(dir, W_OK | X_OK) != 0)
        return host_format(why, len, "this user cannot write it (%s)", strerror(errno)), false;
    if (!host_plugin_insecure("folder", dir, false, why, len)) return true;
    char *plugins_only = strstr(why, ", or pass --allow-insecure-plugins"); /* not for this */
    if (plugins_only) *plugins_only = '\0';
    return false;
}

/* The copies of cfg's paths into in; false when memory ran out. */
static bool keep_paths(host_inspector *in, const host_inspect_config *cfg)
{
    in->save_file = cfg->save_file ? strdup(cfg->save_file) : NULL;
    in->save_dir = cfg->save_dir ? strdup(cfg->save_dir) : NULL;
    return (!cfg->save_file || in->save_file) && (!cfg->save_dir || in->save_dir);
}

static void free_inspector(host_inspector *in)
{
    free(in->save_file);
    free(in->save_dir);
    free(in);
}

host_inspector *host_inspector_new(host_world *w, const host_inspect_config *cfg)
{
    char addr[INET_ADDRSTRLEN];
    struct sockaddr_in sa;
    bool read_only = cfg->read_only;
    if (!parse_spec(cfg->spec, &sa, addr, sizeof addr)) return NULL;
    host_inspector *in = calloc(1, sizeof *in);
    unsigned char raw[16];
    if (!in || !keep_paths(in, cfg) || getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        host_error("inspect", "cannot make a token: %s", in ? strerror(errno) : "no memory");
        if (in) free_inspector(in);
        return NULL;
    }
    for (size_t i = 0; i < sizeof raw; i++) snprintf(in->token + 2 * i, 3, "%02x", raw[i]);
    in->w = w;
    in->read_only = read_only;
    in->start_ns = in->rate_t0 = host_now_ns();
    snprintf(in->addr, sizeof in->addr, "%s", addr);
    in->d = start_daemon(in, &sa);
    const union MHD_DaemonInfo *fd =
        in->d ? MHD_get_daemon_info(in->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    const union MHD_DaemonInfo *pi =
        in->d ? MHD_get_daemon_info(in->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!in->d || !fd || !pi) {
        host_error("inspect", "cannot serve on %s:%u: %s", addr, ntohs(sa.sin_port),
                   errno ? strerror(errno) : "libmicrohttpd failed");
        if (in->d) MHD_stop_daemon(in->d);
        free_inspector(in);
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
    while (in->jobs) { /* nobody will be answered: their connections go on to close */
        in->jobs->gone = true;
        job_finish(in, in->jobs);
    }
    MHD_run(in->d);
    MHD_stop_daemon(in->d);
    for (size_t i = 0; i < LOG_RING; i++) free(in->ring[i].who), free(in->ring[i].msg);
    free(in->marks);
    free_inspector(in);
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
    if (in->jobs) run_jobs(in, now + SLICE_NS); /* one slice a boundary, idle time or not */
    if (answer) MHD_run(in->d);
}

void host_inspector_wait(host_inspector *in, uint64_t deadline_ns, volatile int *stop)
{
    MHD_run(in->d); /* what waits now, even when the frames run late and there is no time */
    for (;;) {
        uint64_t now = host_now_ns();
        if (now >= deadline_ns || (stop && *stop)) return;
        if (in->jobs && deadline_ns - now > WAIT_MARGIN_NS + MIN_WAIT_SLICE) {
            uint64_t until = deadline_ns - WAIT_MARGIN_NS; /* the idle time goes to the jobs */
            run_jobs(in, until < now + SLICE_NS ? until : now + SLICE_NS);
            MHD_run(in->d); /* answers and new requests between slices */
            continue;
        }
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
