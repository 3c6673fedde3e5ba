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
#include <fcntl.h>
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
#include "perm.h"

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
    host_world_trace_slice(in->hs->world, j->kind->name, "inspect", t0, t1);
    if (sig && j->crashed) host_plugin_crashed((host_plugin *)j->crashed, sig, j->crash_in);
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
                    host_signame(j->crash_sig), j->crash_in ? j->crash_in : "its code");
        return inspect_reply_error(c, 500, msg);
    }
    double ms = (double)(host_now_ns() - j->start_ns) / 1e6;
    uint64_t frames = in->hs->world->frame.frame - j->frame0;
    host_detail("inspect",
                "a %s answered in %.1f ms: %.1f ms of work in %u slices (the longest %.2f ms) over "
                "%llu frames",
                j->kind->name, ms, (double)j->work_ns / 1e6, j->slices, (double)j->longest_ns / 1e6,
                (unsigned long long)frames);
    if (j->kind->reply) return j->kind->reply(in, j, c); /* not JSON: its own answer */
    unsigned status = 200;
    cJSON *v = j->kind->answer(in, j, &status);
    if (!v) return inspect_reply_error(c, 500, "out of memory");
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
    if (!host_entity_alive(in->hs->world->entities, e))
        return inspect_reply_error(c, 404,
                                   "no such entity: it is not alive (destroyed, or a stale id)");
    return inspect_entity(in, c, r, method, e, slash ? slash : "");
}

/* The /api/ paths that only read (GET); *routed false when p is not one of them. */
static enum MHD_Result route_read(host_inspector *in, struct MHD_Connection *c, request *r,
                                  const char *p, bool get, bool *routed)
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
    if (!strcmp(p, "stats"))
        return get ? inspect_reply_json(c, 200, inspect_stats_json(in))
                   : inspect_reply_error(c, 405, "GET only");
    if (!strcmp(p, "view"))
        return get ? inspect_view_start(in, c, r) : inspect_reply_error(c, 405, "GET only");
    *routed = false;
    return MHD_NO;
}

static enum MHD_Result route(host_inspector *in, struct MHD_Connection *c, const char *url,
                             const char *method, request *r)
{
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!strcmp(url, "/") || !strcmp(url, "/index.html")) { /* the gate checked the Host */
        if (!get) return inspect_reply_error(c, 405, "the page is read with GET");
        char *page = strdup(host_inspect_page);
        return page ? inspect_reply_text(c, 200, "text/html; charset=utf-8", page, strlen(page))
                    : MHD_NO;
    }
    if (strncmp(url, "/api/", 5) != 0) return inspect_reply_error(c, 404, "no such page");
    if (r->too_big) return inspect_reply_error(c, 413, "the request body is over 1 MiB");
    const char *p = url + 5; /* the gate checked the token too, and read-only */
    bool routed;
    enum MHD_Result res = route_read(in, c, r, p, get, &routed);
    if (routed) return res;
    if (!strcmp(p, "save"))
        return post ? inspect_save_world(in, c, r) : inspect_reply_error(c, 405, "POST only");
    if (!strcmp(p, "control") || !strcmp(p, "snapshots") || !strncmp(p, "snapshots/", 10) ||
        !strcmp(p, "loop"))
        return inspect_route_control(in, c, r, method, p);
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
    request *r = *con_cls;
    if (!r || !r->checked) { /* the headers: the body (if any) comes in the next calls */
        if (!r && !(r = calloc(1, sizeof *r))) return MHD_NO;
        *con_cls = r;
        r->checked = true;
        const char *msg;
        unsigned refused = inspect_gate_check(cls, c, r, url, method, version, &msg);
        return refused ? inspect_reply_error(c, refused, msg) : MHD_YES; /* no body read */
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
    (void)why;
    host_inspector *in = cls;
    request *r = *con_cls;
    inspect_gate_request_done(in, c);
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
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_error, in, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)sa,
        MHD_OPTION_URI_LOG_CALLBACK, inspect_gate_uri, in, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)CONNECTION_MAX, MHD_OPTION_NOTIFY_CONNECTION, inspect_gate_notify, in,
        MHD_OPTION_UNESCAPE_CALLBACK, inspect_gate_unescape, in, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, in, MHD_OPTION_END);
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

/* The URL to open, with the token: in the log (never in the inspector's ring: the page and
 * /api/log show that), and in a file only this user may read under $XDG_RUNTIME_DIR, whose
 * name the log gives even with -q (which would hide the URL itself). */
static void tell_url(host_inspector *in, const char *addr)
{
    char url[128];
    snprintf(url, sizeof url, "http://%s:%u/#token=%s", addr, in->port, in->token);
    const char *dir = getenv("XDG_RUNTIME_DIR");
    char path[4096];
    int fd = -1;
    if (dir && *dir) {
        snprintf(path, sizeof path, "%s/ecs-host-inspect-%d.url", dir, (int)getpid());
        unlink(path); /* a host of the same pid before: dead, as this pid is ours */
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd >= 0 && dprintf(fd, "%s\n", url) > 0 && close(fd) == 0) {
        in->url_file = strdup(path);
    } else if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    ecs_log_level level = host_log_level();
    bool quiet = level < ECS_LOG_INFO; /* -q */
    host_info("inspect", "open %s%s", url, in->read_only ? " (read-only)" : "");
    if (quiet) host_log_set_level(ECS_LOG_INFO); /* where the URL is, even then */
    if (in->url_file)
        host_info("inspect", "the URL with its token is also in %s (for this user only)",
                  in->url_file);
    else if (quiet) /* no file: -q cannot hide the one way in */
        host_info("inspect", "open %s", url);
    if (quiet) host_log_set_level(level);
}

/* The copies of cfg's paths into in; false when memory ran out. */
static bool keep_paths(host_inspector *in, const host_inspect_config *cfg)
{
    in->save_file = cfg->save_file ? strdup(cfg->save_file) : NULL;
    in->save_dir = cfg->save_dir ? strdup(cfg->save_dir) : NULL;
    bool ok = (!cfg->save_file || in->save_file) && (!cfg->save_dir || in->save_dir);
    in->hosts = cfg->host_count ? calloc(cfg->host_count, sizeof *in->hosts) : NULL;
    for (size_t i = 0; in->hosts && i < cfg->host_count; i++, in->host_count++)
        ok = (in->hosts[i] = strdup(cfg->hosts[i])) && ok;
    return ok && (!cfg->host_count || in->hosts);
}

static void free_inspector(host_inspector *in)
{
    if (in->url_file) unlink(in->url_file);
    free(in->url_file);
    free(in->save_file);
    free(in->save_dir);
    for (size_t i = 0; i < in->host_count; i++) free(in->hosts[i]);
    free(in->hosts);
    free(in);
}

host_inspector *host_inspector_new(host_session *hs, const host_inspect_config *cfg)
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
    in->hs = hs;
    in->read_only = read_only;
    in->control = cfg->control;
    in->start_ns = in->rate_t0 = host_now_ns();
    in->last_poll_ns = in->start_ns; /* the first interval: the start's (the scene's load) */
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
                  "serving on %s, not only this machine: whoever reaches it can send any Host "
                  "header (that check only stops other sites' pages in a browser here), so the "
                  "token is the only barrier: anyone who has it can change the world. To open "
                  "the page by a name of this machine, allow it with --inspect-host NAME",
                  addr);
    tell_url(in, strcmp(addr, "0.0.0.0") ? addr : "127.0.0.1");
    host_log_set_listener(on_log, in); /* after the URL: its token stays out of the ring */
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
    inspect_gate_free(in);
    inspect_index_free_all(in);
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

/* Answer what libmicrohttpd has ready (requests, the next bytes of a download) until
 * nothing is ready or until `until`, at least once. True when a download moved on. */
static bool serve(host_inspector *in, uint64_t until)
{
    uint64_t bytes = in->stream_bytes, before;
    MHD_UNSIGNED_LONG_LONG ms;
    do {
        before = in->stream_bytes;
        MHD_run(in->d);
    } while (host_now_ns() < until &&
             ((MHD_get_timeout(in->d, &ms) == MHD_YES && ms == 0) ||
              in->stream_bytes != before)); /* a socket that takes more: give it more */
    return in->stream_bytes != bytes;
}

/* At a frame boundary: the interval since the last one (the chart's), the inspector's own
 * time during it (the schedule's "inspector" row), the rate. */
static void note_frame(host_inspector *in, uint64_t now)
{
    host_session *hs = in->hs;
    in->frame_us[in->frame_at] = (float)((double)(now - in->last_poll_ns) / 1e3);
    in->own_us[in->frame_at] = (float)((double)in->own_ns / 1e3);
    in->frame_at = (in->frame_at + 1) % FRAME_RING;
    if (in->frame_n < FRAME_RING) in->frame_n++;
    host_timing_record(&in->own, in->own_ns);
    inspect_stats_frame(in, now, now - in->last_poll_ns);
    in->last_poll_ns = now;
    in->own_ns = 0;
    if (now - in->rate_t0 >= 500000000ull) { /* the rate over the last half second or more */
        in->fps =
            (double)(hs->world->frame.frame - in->rate_frame0) * 1e9 / (double)(now - in->rate_t0);
        in->rate_t0 = now;
        in->rate_frame0 = hs->world->frame.frame;
    }
}

void host_inspector_poll(host_inspector *in, bool answer)
{
    uint64_t now = host_now_ns();
    note_frame(in, now);
    inspect_gate_sweep(in, now);
    uint64_t until = now + SLICE_NS;   /* what the inspector may take of this boundary */
    if (in->jobs) run_jobs(in, until); /* one slice a boundary, idle time or not */
    if (answer) serve(in, until);
    uint64_t spent = host_now_ns() - now;
    in->own_ns += spent;
    in->boundary_ns = spent;
}

void host_inspector_wait(host_inspector *in, uint64_t deadline_ns, volatile int *stop)
{
    uint64_t entered = host_now_ns(), slept = 0; /* the rest is the inspector's own time */
    serve(in, entered + SLICE_NS);               /* what waits now, even when the frames run late */
    for (;;) {
        uint64_t now = host_now_ns();
        if (now >= deadline_ns || (stop && *stop)) {
            in->own_ns += now - entered - slept;
            return;
        }
        inspect_gate_sweep(in, now);
        uint64_t until = deadline_ns - WAIT_MARGIN_NS; /* the idle time goes to the work */
        if (until > now + SLICE_NS) until = now + SLICE_NS;
        bool room = deadline_ns - now > WAIT_MARGIN_NS + MIN_WAIT_SLICE;
        if (in->jobs && room) {
            run_jobs(in, until);
            MHD_run(in->d); /* answers and new requests between slices */
            continue;
        }
        if (in->streams && room && serve(in, until)) continue; /* a download that moves */
        uint64_t wait = deadline_ns - now;
        MHD_UNSIGNED_LONG_LONG mhd_ms;
        if (MHD_get_timeout(in->d, &mhd_ms) == MHD_YES && mhd_ms * 1000000ull < wait)
            wait = mhd_ms * 1000000ull;
        struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
        struct pollfd p = {in->epoll_fd, POLLIN, 0};
        int n = ppoll(&p, 1, &ts, NULL);
        slept += host_now_ns() - now;
        if (n != 0)
            MHD_run(in->d); /* a request (or a signal: nothing to do) */
        else if (wait < deadline_ns - now)
            MHD_run(in->d); /* its own timeout */
    }
}
