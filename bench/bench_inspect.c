/* SPDX-License-Identifier: MIT */
/* bench_inspect.c: workload "inspect", BENCH.md I1: what the inspector (--inspect) costs
 * the frame loop, beside the same frames without it.
 *
 * The demo scene (examples/demo.json) in a world of the real transform, mesh, debug_name
 * and spin plugins, loaded in process. Rows:
 *   1. no client: host_world_frame + host_inspector_poll per frame, against
 *      host_world_frame alone (FRAMES frames each, ns per frame);
 *   2. the page open: a client thread makes the page's requests at the page's rates
 *      (world 1/s, schedule 2/s, plugins 1/s, events 10/s, the 3D view 1/s, a page of
 *      roots 0.5/s, the selected entity 2/s) while the main thread runs frames at about
 *      1 kHz, answering between frames; ours is the main thread's time per frame (frame +
 *      the poll at its boundary), the baseline the same loop without the inspector;
 *   3. for worlds of 1 M and 4 M entities (a transform and a debug name each, in 1000-node
 *      trees): the longest frame (host_world_frame + the boundary poll, frames back to
 *      back, so the inspector has no idle time) while one request is answered: a page of
 *      100 at the end of the list, a name search, the children of a root, a query, the 3D
 *      view; beside as many frames without the inspector.
 * The checksum sums the frames run and the bytes answered.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "debug_name_api.h"
#include "inspect.h"
#include "log.h"
#include "scene.h"
#include "transform_api.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#if !defined(TRANSFORM_SO) || !defined(MESH_SO) || !defined(DEBUG_NAME_SO) || !defined(SPIN_SO) || \
    !defined(DEMO_SCENE)
#error "bench/meson.build defines TRANSFORM_SO, MESH_SO, DEBUG_NAME_SO, SPIN_SO and DEMO_SCENE"
#endif

#define FRAMES 20000u
#define PAGE_S 2.0 /* seconds of frames with the page's requests */

static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The inspector's URL parts, from its log line (captured through the log listener). */
typedef struct client {
    unsigned port;
    char token[64];
    volatile int stop, done; /* done: the page client returned (no request in flight) */
    uint64_t bytes, requests;
} client;

static size_t get(client *c, const char *path)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        if (s >= 0) close(s);
        return 0;
    }
    char req[512], buf[65536];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n"
                     "Connection: close\r\n\r\n",
                     path, c->port, c->token);
    size_t got = 0;
    if (write(s, req, (size_t)n) == n)
        for (ssize_t k; (k = read(s, buf, sizeof buf)) > 0;) got += (size_t)k;
    close(s);
    return got;
}

static void *page_client(void *arg)
{
    client *c = arg;
    static const struct {
        const char *path;
        unsigned every_ms;
    } reqs[] = {{"/api/world", 1000},      {"/api/schedule", 500}, {"/api/plugins", 1000},
                {"/api/events", 100},      {"/api/view", 1000},    {"/api/entities?roots=1", 2000},
                {"/api/entities/2.0", 500}};
    enum { N = sizeof reqs / sizeof *reqs };
    uint64_t next[N] = {0}, t0 = bench_now_ns();
    while (!c->stop) {
        uint64_t now = (bench_now_ns() - t0) / 1000000u;
        for (int i = 0; i < N; i++)
            if (now >= next[i]) {
                c->bytes += get(c, reqs[i].path);
                c->requests++;
                next[i] = now + reqs[i].every_ms;
            }
        usleep(5000);
    }
    c->done = 1;
    return NULL;
}

/* An inspector on a free port, its log line kept out of the benchmark's output. */
static host_inspector *open_inspector(host_session *s, client *c)
{
    host_log_set_level(ECS_LOG_WARN);
    host_inspector *in = host_inspector_new(s, &(host_inspect_config){.spec = "0"});
    host_log_set_level(ECS_LOG_INFO);
    if (!in) return NULL;
    c->port = host_inspector_port(in);
    snprintf(c->token, sizeof c->token, "%s", host_inspector_token(in));
    return in;
}

static int open_demo(bench_world *bw)
{
    static const char *const paths[] = {TRANSFORM_SO, MESH_SO, DEBUG_NAME_SO, SPIN_SO};
    if (bench_world_open(bw, "inspect", paths, 4, NULL) != 0) return -1;
    return host_scene_load(bw->s->scene, DEMO_SCENE) == ECS_OK ? 0 : -1;
}

/* FRAMES frames, with in polled after each (NULL: none): ns per frame. */
static double frames_ns(host_world *w, host_inspector *in)
{
    uint64_t t0 = bench_now_ns();
    for (unsigned i = 0; i < FRAMES; i++) {
        host_world_frame(w);
        if (in) host_inspector_poll(in, true); /* no wait between: answered here */
    }
    return (double)(bench_now_ns() - t0) / FRAMES;
}

/* PAGE_S seconds of frames at about 1 kHz, waiting between them (answering requests when
 * in is set): the frame loop's time per frame, the frame and the poll at its boundary
 * (what a frame waits for), not the wait; *cpu_ns gets the thread's CPU time per frame,
 * answers included; *frames counts them. */
static double paced_ns(host_world *w, host_inspector *in, double *cpu_per_frame, uint64_t *frames)
{
    uint64_t c0 = cpu_ns(), t0 = bench_now_ns(), n = 0, busy = 0;
    while (bench_now_ns() - t0 < (uint64_t)(PAGE_S * 1e9)) {
        uint64_t f0 = bench_now_ns();
        host_world_frame(w);
        if (in) host_inspector_poll(in, false);
        busy += bench_now_ns() - f0;
        n++;
        if (in) {
            host_inspector_wait(in, bench_now_ns() + 1000000u, NULL);
        } else {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    *frames += n;
    *cpu_per_frame = (double)(cpu_ns() - c0) / (double)n;
    return (double)busy / (double)n;
}

/* ---- big worlds: the longest frame while a request is answered ---- */

static const uint32_t big_sizes[] = {1000000u, 4000000u};

/* One request from a thread while the main thread runs frames. */
typedef struct fetch {
    client *c;
    const char *path;
    size_t got;
    volatile int done;
} fetch;

static void *fetch_path(void *arg)
{
    fetch *f = arg;
    f->got = get(f->c, f->path);
    f->done = 1;
    return NULL;
}

/* A world of n entities with a transform and a debug name each, in BENCH.md's trees of 1000
 * (node k > 0 of a tree has parent (k - 1) / 10), named "tree T node K". Its entities into
 * ents. -1 when something failed. */
static int build_big(bench_world *big, uint32_t n, ecs_entity *ents)
{
    static const char *const paths[] = {TRANSFORM_SO, DEBUG_NAME_SO};
    if (bench_world_open(big, "inspect-big", paths, 2, NULL) != 0) return -1;
    const ecs_transform_api *tf = host_registry_find(&big->s->registry, ECS_TRANSFORM_API_NAME,
                                                     ECS_TRANSFORM_API_VERSION, NULL);
    const ecs_debug_name_api *dn = host_registry_find(&big->s->registry, ECS_DEBUG_NAME_API_NAME,
                                                      ECS_DEBUG_NAME_API_VERSION, NULL);
    if (!tf || !dn || host_entity_create_many(big->w->entities, ents, n) != ECS_OK) return -1;
    if (tf->reserve) tf->reserve(tf->self, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = i % 1000;
        char name[40];
        snprintf(name, sizeof name, "tree %u node %u", i / 1000, k);
        ecs_transform_local l = {ecs_vec3_make((float)k, (float)(i / 1000 % 64), 0),
                                 {0, 0, 0, 1},
                                 ecs_vec3_make(1, 1, 1)};
        ecs_entity parent = k ? ents[i - k + (k - 1) / 10] : ecs_entity_null();
        if (tf->add(tf->self, ents[i], &l, parent) != ECS_OK ||
            dn->set(dn->self, ents[i], name) != ECS_OK)
            return -1;
    }
    return 0;
}

/* Frames back to back (the worst case: no idle time between them for the inspector), each
 * host_world_frame and the inspector's boundary poll, while a thread's request for path is
 * answered: the longest, ms; its frame count into *frames, the answer's bytes into *bytes,
 * the longest in the thread's CPU time into *cpu_ms (what the machine's other work, taking
 * the CPU away mid-frame, does not count in). */
static double longest_during(host_world *w, host_inspector *in, client *c, const char *path,
                             uint32_t *frames, size_t *bytes, double *cpu_ms)
{
    fetch f = {c, path, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, fetch_path, &f) != 0) return -1;
    uint64_t longest = 0, longest_cpu = 0;
    uint32_t n = 0;
    while (!f.done) {
        uint64_t t0 = bench_now_ns(), c0 = cpu_ns();
        host_world_frame(w);
        host_inspector_poll(in, true);
        uint64_t t = bench_now_ns() - t0, tc = cpu_ns() - c0;
        if (t > longest) longest = t;
        if (tc > longest_cpu) longest_cpu = tc;
        n++;
    }
    pthread_join(th, NULL);
    *frames = n, *bytes = f.got, *cpu_ms = (double)longest_cpu / 1e6;
    return (double)longest / 1e6;
}

/* The longest of n frames without the inspector, ms. */
static double longest_alone(host_world *w, uint32_t n)
{
    uint64_t longest = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t0 = bench_now_ns();
        host_world_frame(w);
        uint64_t t = bench_now_ns() - t0;
        if (t > longest) longest = t;
    }
    return (double)longest / 1e6;
}

/* I1's rows for a world of n entities: the longest frame during each kind of request. */
static int run_big(const bench_config *cfg, uint32_t n)
{
    static double o[BENCH_MAX_REPS], b[BENCH_MAX_REPS];
    bench_world big;
    ecs_entity *ents = malloc((size_t)n * sizeof *ents);
    client c = {0};
    host_inspector *in = NULL;
    int rc = ents && build_big(&big, n, ents) == 0 && (in = open_inspector(big.s, &c)) ? 0 : 1;
    char children[64], page[64];
    ecs_entity root = ents ? ents[n - 1000] : ecs_entity_null(); /* the last tree's root */
    snprintf(children, sizeof children, "/api/entities/%u.%u/children", ecs_entity_index(root),
             ecs_entity_generation(root));
    snprintf(page, sizeof page, "/api/entities?offset=%u&limit=100", n - 100);
    const struct {
        const char *what, *path;
    } reqs[] = {{"a page of 100 at the end of the list", page},
                {"a name search (node 567)", "/api/entities?name=node%20567"},
                {"the children of a root", children},
                {"a query ({transform, not debug_name})",
                 "/api/entities?query=%7Btransform%2C%20not%20debug_name%7D"},
                {"the 3D view (200,000 points)", "/api/view"}};
    for (size_t q = 0; rc == 0 && q < sizeof reqs / sizeof *reqs; q++) {
        uint32_t frames = 0, most = 0;
        size_t bytes = 0;
        uint64_t sum = 0;
        double cpu = 0, cpu_most = 0;
        for (int r = 0; r < cfg->reps; r++) {
            struct timespec stale = {1, 100000000}; /* the lists the last one made are stale */
            nanosleep(&stale, NULL);
            o[r] = longest_during(big.w, in, &c, reqs[q].path, &frames, &bytes, &cpu);
            cpu_most = cpu > cpu_most ? cpu : cpu_most;
            b[r] = longest_alone(big.w, frames > 1 ? frames : 1);
            most = frames > most ? frames : most;
            sum += bytes + frames;
        }
        char name[120], note[200];
        snprintf(name, sizeof name, "longest frame, %s, %u M entities", reqs[q].what, n / 1000000);
        snprintf(note, sizeof note,
                 "frames back to back while it was answered: up to %u; %zu bytes; the longest "
                 "in CPU time: %.2f ms; baseline: as many frames without --inspect",
                 most, bytes, cpu_most);
        bench_row row = {"I1",
                         name,
                         "ms",
                         "frames alone",
                         1,
                         bench_stats_of(o, (size_t)cfg->reps),
                         bench_stats_of(b, (size_t)cfg->reps),
                         sum,
                         note};
        bench_report(cfg, "inspect", &row);
    }
    host_inspector_free(in);
    if (ents) bench_world_close(&big);
    free(ents);
    return rc;
}

static int run_inspect(const bench_config *cfg)
{
    static double cpu_extra[BENCH_MAX_REPS], ours[BENCH_MAX_REPS], base[BENCH_MAX_REPS],
        o2[BENCH_MAX_REPS], b2[BENCH_MAX_REPS];
    bench_begin(cfg, "inspect", "I1: the inspector's cost to the frame loop");
    bench_world bw;
    client c = {0};
    host_inspector *in = NULL;
    int rc = open_demo(&bw) == 0 && (in = open_inspector(bw.s, &c)) ? 0 : 1;
    uint64_t sum1 = 0, sum2 = 0;
    for (int r = 0; rc == 0 && r < cfg->reps; r++) {
        base[r] = frames_ns(bw.w, NULL);
        ours[r] = frames_ns(bw.w, in);
        sum1 += 2 * FRAMES;
    }
    if (rc == 0) {
        bench_row row = {"I1",
                         "frame, --inspect and no client",
                         "ns/frame",
                         "no --inspect",
                         1,
                         bench_stats_of(ours, (size_t)cfg->reps),
                         bench_stats_of(base, (size_t)cfg->reps),
                         sum1,
                         "the demo scene, 4 plugins; ours polls the server once per frame"};
        bench_report(cfg, "inspect", &row);
    }
    int reps2 = cfg->reps < 3 ? cfg->reps : 3; /* 2 s each */
    for (int r = 0; rc == 0 && r < reps2; r++) {
        double cpu_base, cpu_ours;
        b2[r] = paced_ns(bw.w, NULL, &cpu_base, &sum2);
        pthread_t th;
        c.stop = c.done = 0;
        if (pthread_create(&th, NULL, page_client, &c) != 0) rc = 1;
        o2[r] = paced_ns(bw.w, in, &cpu_ours, &sum2);
        c.stop = 1;
        /* a request may be in flight: answer it, or the client waits for it forever and
         * the join with it */
        while (rc == 0 && !c.done) host_inspector_poll(in, true); /* jobs too */
        if (rc == 0) pthread_join(th, NULL);
        cpu_extra[r] = cpu_ours - cpu_base;
    }
    if (rc == 0) {
        char note[200];
        bench_stats extra = bench_stats_of(cpu_extra, (size_t)reps2);
        snprintf(note, sizeof note,
                 "frames at ~1 kHz, answers between them: %.1f us of CPU more per frame "
                 "(%.1f ms a second)",
                 extra.median / 1e3, extra.median / 1e3);
        bench_row row = {"I1",
                         "frame + poll, the page open",
                         "ns/frame",
                         "no --inspect",
                         1,
                         bench_stats_of(o2, (size_t)reps2),
                         bench_stats_of(b2, (size_t)reps2),
                         sum2 + c.bytes,
                         note};
        bench_report(cfg, "inspect", &row);
    }
    host_inspector_free(in);
    bench_world_close(&bw);
    for (size_t k = 0; rc == 0 && k < sizeof big_sizes / sizeof *big_sizes; k++)
        rc = run_big(cfg, big_sizes[k]);
    return rc;
}

const bench_workload bench_inspect_workload = {
    "inspect", "I1: the inspector's cost per frame, and a page of a 1 M-entity world", run_inspect};
