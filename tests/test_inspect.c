/* SPDX-License-Identifier: MIT */
/* test_inspect.c: the inspector's API against the real ecs-host (--inspect 0) running the
 * demo scene, spoken to over plain sockets: every endpoint, every error, the token and
 * Host checks, slow and vanishing clients while the frames go on. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"

#ifndef PLUGIN_DIR
#error "tests/meson.build defines PLUGIN_DIR and DEMO_SCENE"
#endif

typedef struct fixture {
    harness_proc proc;
    bool no_save; /* start without --save */
    char *dir, *save;
    unsigned port;
    char token[64];
} fixture;

typedef struct reply {
    int status;
    bool chunked; /* it came in chunks (Transfer-Encoding: chunked): written as it went */
    char *body;   /* NUL-terminated */
    cJSON *json;
} reply;

static void reply_free(reply *r)
{
    free(r->body);
    cJSON_Delete(r->json);
    memset(r, 0, sizeof *r);
}

/* Start ecs-host --inspect 0 on the demo (extra: more options, NULL-terminated; a
 * "--watch" among them runs it on copies of the plugins in f->dir/plugins). */
static void start(fixture *f, const char *const *extra)
{
    const char *argv[24] = {ECS_HOST_PATH, "--inspect", "0",      "--fps", "60",
                            "--scene",     DEMO_SCENE,  "--save", f->save};
    size_t n = f->no_save ? 7 : 9;
    static char folder[4096];
    snprintf(folder, sizeof folder, "%s", PLUGIN_DIR);
    for (; extra && *extra; extra++) {
        argv[n++] = *extra;
        if (strcmp(*extra, "--watch") != 0) continue;
        snprintf(folder, sizeof folder, "%s/plugins", f->dir);
        assert_int_equal(mkdir(folder, 0700), 0);
        static const char *const names[] = {"transform", "mesh", "debug_name", "spin"};
        for (size_t i = 0; i < 4; i++) {
            char src[4200], dst[4200];
            snprintf(src, sizeof src, "%s/%s/%s.so", PLUGIN_DIR, names[i], names[i]);
            snprintf(dst, sizeof dst, "%s/%s.so", folder, names[i]);
            assert_int_equal(harness_copy_file(src, dst, 0755), 0);
        }
    }
    argv[n++] = folder;
    argv[n] = NULL;
    assert_int_equal(harness_start(&f->proc, argv), 0);
    if (!harness_wait_output(&f->proc, "inspect: open http://127.0.0.1:", 10)) {
        fprintf(stderr, "no URL:\n%s\n", f->proc.result.err ? f->proc.result.err : "");
        fail();
    }
    const char *url = strstr(f->proc.result.err, "open http://127.0.0.1:");
    assert_int_equal(sscanf(url, "open http://127.0.0.1:%u/#token=%63[0-9a-f]", &f->port, f->token),
                     2);
    assert_int_equal(strlen(f->token), 32); /* 128 bits */
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->proc.fd[0] = f->proc.fd[1] = -1;
    f->dir = harness_make_tmpdir("ecs-inspect-test");
    f->save = harness_join(f->dir, "saved.json");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_proc_discard(&f->proc);
    harness_remove_tree(f->dir);
    free(f->dir);
    free(f->save);
    free(f);
    return 0;
}

static int connect_to(const fixture *f)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_true(s >= 0);
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    return s;
}

static void send_all(int s, const char *text, size_t len)
{
    while (len) {
        ssize_t n = send(s, text, len, MSG_NOSIGNAL);
        if (n <= 0) return; /* the server may answer (413) and close before it all went */
        text += n;
        len -= (size_t)n;
    }
}

/* The body of a chunked answer s[0..len) (RFC 9112 7.1: a hex size, CRLF, the data, CRLF;
 * a size 0 ends it), put together (malloc'd). */
static char *unchunk(const char *s, size_t len)
{
    const char *stop = s + len;
    char *out = malloc(len + 1), *end;
    size_t n = 0;
    for (;;) {
        unsigned long size = strtoul(s, &end, 16);
        const char *data = memchr(end, '\n', (size_t)(stop - end));
        if (!size || !data || (size_t)(stop - data - 1) < size) break; /* the end, or cut */
        memcpy(out + n, data + 1, size);
        n += size;
        s = data + 1 + size + 2;
    }
    out[n] = '\0';
    return out;
}

/* Read the whole answer (the server closes: Connection: close) into r. */
static void read_reply(int s, reply *r)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        struct pollfd p = {s, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0) break;
        if (len + 4096 > cap) buf = realloc(buf, cap *= 2);
        ssize_t n = recv(s, buf + len, cap - len - 1, 0);
        if (n <= 0) break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    memset(r, 0, sizeof *r);
    sscanf(buf, "HTTP/1.1 %d", &r->status);
    char *body = strstr(buf, "\r\n\r\n");
    if (body) body[2] = '\0'; /* the headers, then the body */
    r->chunked = body && strcasestr(buf, "\r\nTransfer-Encoding: chunked\r\n");
    r->body = r->chunked ? unchunk(body + 4, len - (size_t)(body + 4 - buf))
                         : strdup(body ? body + 4 : "");
    r->json = cJSON_Parse(r->body);
    free(buf);
}

/* One request: method, path, body (NULL: none); host NULL: 127.0.0.1:PORT; token NULL: the
 * right one, "" none. */
static void request(const fixture *f, const char *method, const char *path, const char *body,
                    const char *host, const char *token, reply *r)
{
    char head[1024], hostbuf[64];
    snprintf(hostbuf, sizeof hostbuf, "127.0.0.1:%u", f->port);
    const char *tok = token ? token : f->token;
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%sContent-Length: %zu\r\nConnection: "
                     "close\r\n\r\n",
                     method, path, host ? host : hostbuf, *tok ? "Authorization: Bearer " : "", tok,
                     *tok ? "\r\n" : "", body ? strlen(body) : 0);
    int s = connect_to(f);
    send_all(s, head, (size_t)n);
    if (body) send_all(s, body, strlen(body));
    read_reply(s, r);
    close(s);
}

/* Send text as it is (a request with its headers exactly as given) and read the answer. */
static void raw_request(const fixture *f, const char *text, reply *r)
{
    int s = connect_to(f);
    send_all(s, text, strlen(text));
    read_reply(s, r);
    close(s);
}

static void get(const fixture *f, const char *path, reply *r)
{
    request(f, "GET", path, NULL, NULL, NULL, r);
}

static void expect_status(const reply *r, int status, const char *what)
{
    if (r->status == status) return;
    fail_msg("%s: status %d, expected %d: %s", what, r->status, status, r->body);
}

static double number_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) fail_msg("no number '%s' in %s", key, cJSON_PrintUnformatted(o));
    return v->valuedouble;
}

static const char *string_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v)) fail_msg("no string '%s' in %s", key, cJSON_PrintUnformatted(o));
    return v->valuestring;
}

/* The entity id ("I.G") of the demo entity with scene id sid. */
static void id_of(const fixture *f, const char *sid, char *out, size_t size)
{
    reply r;
    char path[128];
    snprintf(path, sizeof path, "/api/entities?name=%s&limit=1000", sid);
    get(f, path, &r);
    expect_status(&r, 200, path);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        if (strcmp(string_at(it, "scene_id"), sid) == 0) {
            snprintf(out, size, "%s", string_at(it, "id"));
            reply_free(&r);
            return;
        }
    }
    fail_msg("no entity '%s' in %s", sid, r.body);
}

static void stop(fixture *f)
{
    kill(f->proc.pid, SIGTERM);
    harness_finish(&f->proc, 10);
    assert_int_equal(f->proc.result.exit_code, 0);
}

/* ---- the tests ---- */

static void Inspect_world_plugins_and_schedule_describe_the_demo(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    get(f, "/api/world", &r);
    expect_status(&r, 200, "world");
    assert_int_equal((int)number_at(r.json, "entities"), 39);
    assert_int_equal((int)number_at(r.json, "plugins"), 4);
    assert_true(number_at(r.json, "frame") >= 0);
    assert_true(number_at(r.json, "uptime_s") > 0);
    reply_free(&r);
    get(f, "/api/plugins", &r);
    expect_status(&r, 200, "plugins");
    const char *want[] = {"debug_name", "mesh", "spin", "transform"};
    for (size_t i = 0; i < 4; i++) {
        bool found = false;
        const cJSON *p;
        cJSON_ArrayForEach(p, r.json)
        {
            if (strcmp(string_at(p, "name"), want[i])) continue;
            found = true;
            assert_string_equal(string_at(p, "status"), "loaded");
            assert_string_equal(string_at(p, "abi"), "1.1");
        }
        if (!found) fail_msg("plugin %s not listed: %s", want[i], r.body);
    }
    reply_free(&r);
    get(f, "/api/entities?limit=1000", &r); /* how many have a transform */
    int with_transform = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(it, "components"))
        {
            with_transform += !strcmp(c->valuestring, "transform");
        }
    }
    reply_free(&r);
    assert_true(with_transform > 30);
    get(f, "/api/schedule", &r);
    expect_status(&r, 200, "schedule");
    bool transform = false, spin_system = false, inspector = false;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(r.json, "steps"))
    {
        if (!strcmp(string_at(s, "name"), "transform"))
            transform = !strcmp(string_at(s, "kind"), "manager") &&
                        number_at(s, "components") == with_transform &&
                        !strcmp(string_at(s, "plugin"), "transform");
        if (!strcmp(string_at(s, "kind"), "system")) spin_system = true;
        if (!strcmp(string_at(s, "kind"), "host")) /* the inspector's own time */
            inspector = !strcmp(string_at(s, "name"), "inspector");
    }
    assert_true(inspector);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "inspector_us")),
                     cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "frames_us")));
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "frames_us")) > 0);
    assert_true(transform);
    assert_true(spin_system);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r.json, "jobs"), *j; /* --threads */
    cpu_set_t cpus;
    assert_int_equal(sched_getaffinity(0, sizeof cpus, &cpus), 0);
    int threads = CPU_COUNT(&cpus) < 64 ? CPU_COUNT(&cpus) : 64, k = 0;
    assert_int_equal(cJSON_GetArraySize(jobs), threads); /* the default: a thread per CPU */
    cJSON_ArrayForEach(j, jobs)
    {
        char name[16];
        snprintf(name, sizeof name, k ? "ecs-job-%d" : "main", k);
        assert_string_equal(string_at(j, "thread"), name);
        assert_true(number_at(j, "busy") >= 0 && number_at(j, "busy") <= 1);
        k++;
    }
    reply_free(&r);
    get(f, "/", &r); /* the page, no token needed */
    expect_status(&r, 200, "page");
    assert_non_null(strstr(r.body, "<title>ecs-host inspector</title>"));
    reply_free(&r);
    stop(f);
}

static void Inspect_entities_come_in_pages_with_a_name_filter(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    get(f, "/api/entities?limit=5", &r);
    expect_status(&r, 200, "page");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
    assert_int_equal(cJSON_GetArraySize(items), 5);
    assert_int_equal((int)number_at(r.json, "total"), 39);
    assert_string_equal(string_at(items->child, "scene_id"), "street");
    assert_string_equal(string_at(items->child, "name"), "Main street");
    assert_string_equal(string_at(items->child->next, "parent"), "street");
    reply_free(&r);
    get(f, "/api/entities?limit=0", &r); /* the count alone */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "items")), 0);
    assert_int_equal((int)number_at(r.json, "total"), 39);
    reply_free(&r);
    get(f, "/api/entities?name=door&limit=0", &r); /* the matches' count alone */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "items")), 0);
    assert_true(number_at(r.json, "total") >= 2 && number_at(r.json, "total") < 39);
    reply_free(&r);
    get(f, "/api/entities?offset=38&limit=5", &r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "items")), 1);
    reply_free(&r);
    get(f, "/api/entities?name=DOOR&limit=1000", &r);
    expect_status(&r, 200, "filter");
    int n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        n++;
        if (!strcasestr(string_at(it, "name"), "door")) fail_msg("%s", string_at(it, "name"));
    }
    assert_true(n >= 2);
    assert_int_equal((int)number_at(r.json, "total"), n);
    reply_free(&r);
    char id[32], path[64];
    id_of(f, "house1", id, sizeof id);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    expect_status(&r, 200, path);
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r.json, "components"),
                                         "transform"),
        "position");
    assert_int_equal(cJSON_GetArrayItem(pos, 0)->valuedouble, -18);
    assert_int_equal(cJSON_GetArrayItem(pos, 2)->valuedouble, 14);
    reply_free(&r);
    get(f, "/api/entities/999999.0", &r);
    expect_status(&r, 404, "dead id");
    reply_free(&r);
    get(f, "/api/entities/abc", &r);
    expect_status(&r, 404, "not an id");
    reply_free(&r);
    get(f, "/api/entities?limit=x", &r);
    expect_status(&r, 400, "bad limit");
    reply_free(&r);
    stop(f);
}

static void Inspect_edit_is_checked_like_a_scene_and_reaches_the_save(void **state)
{
    fixture *f = *state;
    reply r;
    char id[32], path[96], old[4096];
    start(f, NULL);
    id_of(f, "house1", id, sizeof id);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    snprintf(old, sizeof old, "%s", r.body);
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s/transform", id);
    request(f, "PUT", path, "{\"position\": [1, \"x\", 3]}", NULL, NULL, &r);
    expect_status(&r, 400, "bad value");
    assert_string_equal(string_at(r.json, "path"), "transform.position[1]");
    assert_non_null(strstr(string_at(r.json, "error"), "expected a finite number, found a string"));
    reply_free(&r);
    request(f, "PUT", path, "{\"parent\": \"nobody\"}", NULL, NULL, &r);
    expect_status(&r, 400, "unknown reference");
    assert_string_equal(string_at(r.json, "path"), "transform.parent");
    reply_free(&r);
    request(f, "PUT", path, "{\"position\": [1, 2", NULL, NULL, &r);
    expect_status(&r, 400, "bad JSON");
    assert_string_equal(string_at(r.json, "error"), "body:1:19: unexpected end of the file");
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    assert_string_equal(r.body, old); /* every failed edit left it as it was */
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s/nothere", id);
    request(f, "PUT", path, "1", NULL, NULL, &r);
    expect_status(&r, 404, "unknown manager");
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s/transform", id);
    request(f, "PUT", path, "{\"position\": [1, 2, 3], \"parent\": \"street\"}", NULL, NULL, &r);
    expect_status(&r, 200, "edit");
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    assert_non_null(strstr(r.body, "\"position\":[1,2,3]"));
    reply_free(&r);
    stop(f);
    char *saved = harness_read_file(f->save, NULL);
    assert_non_null(saved);
    cJSON *doc = cJSON_Parse(saved), *e;
    bool seen = false;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "entities"))
    {
        if (strcmp(string_at(e, "id"), "house1")) continue;
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(e, "transform"), "position");
        seen = cJSON_GetArrayItem(p, 0)->valuedouble == 1 &&
               cJSON_GetArrayItem(p, 1)->valuedouble == 2 &&
               cJSON_GetArrayItem(p, 2)->valuedouble == 3;
    }
    cJSON_Delete(doc);
    free(saved);
    assert_true(seen);
}

/* The entity's component of manager as JSON text (malloc'd), from GET. */
static char *component_text(const fixture *f, const char *id, const char *manager)
{
    reply r;
    char path[96];
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    expect_status(&r, 200, path);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r.json, "components"), manager);
    char *text = v ? cJSON_PrintUnformatted(v) : strdup("(none)");
    reply_free(&r);
    return text;
}

/* Issue 33 item 2: PATCH changes only the members it names; an unknown key (a typo) is
 * refused with its path by PATCH and PUT alike, the component left as it was. Before, PUT
 * {"position": [9, 9, 9]} reset the scale and dropped the parent, and {"positon": ...}
 * answered 200 and reset the transform to identity; PATCH was 405. */
static void Inspect_patch_changes_only_what_it_names_and_unknown_keys_are_refused(void **state)
{
    fixture *f = *state;
    reply r;
    char id[32], path[96];
    start(f, NULL);
    id_of(f, "house1", id, sizeof id);
    snprintf(path, sizeof path, "/api/entities/%s/transform", id);
    request(f, "PUT", path,
            "{\"position\": [1, 2, 3], \"scale\": [2, 2, 2], \"parent\": \"street\"}", NULL, NULL,
            &r);
    expect_status(&r, 200, "PUT");
    reply_free(&r);
    request(f, "PATCH", path, "{\"position\": [9, 9, 9]}", NULL, NULL, &r);
    expect_status(&r, 200, "PATCH position");
    reply_free(&r);
    char *now = component_text(f, id, "transform");
    assert_string_equal(now, "{\"position\":[9,9,9],\"rotation\":[0,0,0,1],\"scale\":[2,2,2],"
                             "\"parent\":\"street\"}");
    static const char *const typos[][2] = {{"PATCH", "{\"positon\": [5, 5, 5]}"},
                                           {"PUT", "{\"positon\": [5, 5, 5]}"},
                                           {"PATCH", "{\"scale\": [3, 3, 3], \"sclae\": 1}"},
                                           {"PUT", "{\"position\": [5, 5, 5], \"x\": null}"}};
    for (size_t i = 0; i < 4; i++) {
        request(f, typos[i][0], path, typos[i][1], NULL, NULL, &r);
        if (r.status != 400 || !strstr(string_at(r.json, "error"), "unknown key"))
            fail_msg("%s %s: %d %s", typos[i][0], typos[i][1], r.status, r.body);
        const char *want = i == 2   ? "transform.sclae"
                           : i == 3 ? "transform.x"
                                    : "transform.positon";
        assert_string_equal(string_at(r.json, "path"), want);
        reply_free(&r);
        char *after = component_text(f, id, "transform");
        assert_string_equal(after, now); /* as it was */
        free(after);
    }
    free(now);
    request(f, "PATCH", path, "{\"parent\": null}", NULL, NULL, &r); /* null removes a member */
    expect_status(&r, 200, "PATCH parent null");
    reply_free(&r);
    now = component_text(f, id, "transform");
    assert_string_equal(now, "{\"position\":[9,9,9],\"rotation\":[0,0,0,1],\"scale\":[2,2,2]}");
    free(now);
    request(f, "PATCH", path, "{\"position\": [1, 2", NULL, NULL, &r); /* the body's own error */
    expect_status(&r, 400, "PATCH bad JSON");
    assert_string_equal(string_at(r.json, "error"), "body:1:19: unexpected end of the file");
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s/debug_name", id); /* not an object: replaced */
    request(f, "PATCH", path, "\"House one\"", NULL, NULL, &r);
    expect_status(&r, 200, "PATCH a string");
    reply_free(&r);
    now = component_text(f, id, "debug_name");
    assert_string_equal(now, "\"House one\"");
    free(now);
    stop(f);
}

/* Issue 31 item 12: a mesh edit that fails (a bad value in the second mesh, an unknown key)
 * leaves every mesh of the entity as it was. */
static void Inspect_a_failed_mesh_edit_leaves_the_meshes_as_they_were(void **state)
{
    fixture *f = *state;
    reply r;
    char id[32], path[96];
    start(f, NULL);
    id_of(f, "house1", id, sizeof id);
    snprintf(path, sizeof path, "/api/entities/%s/mesh", id);
    request(f, "PUT", path,
            "[{\"mesh\": \"a.mesh\", \"bounds\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}},"
            " {\"mesh\": \"b.mesh\", \"bounds\": {\"min\": [0, 0, 0], \"max\": [2, 2, 2]}}]",
            NULL, NULL, &r);
    expect_status(&r, 200, "two meshes");
    reply_free(&r);
    char *before = component_text(f, id, "mesh");
    assert_non_null(strstr(before, "b.mesh"));
#define GOOD_MESH "{\"mesh\": \"c.mesh\", \"bounds\": {\"min\": [0, 0, 0], \"max\": [3, 3, 3]}}"
#define BOUNDS    "\"bounds\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}"
    static const char *const bad[] = {
        "[" GOOD_MESH ", {\"mesh\": \"d.mesh\", \"bounds\": {\"min\": [1, 1, 1], \"max\": [0, 0, "
        "0]}}]",
        "[" GOOD_MESH ", {\"mesh\": 7, " BOUNDS "}]",
        "[" GOOD_MESH ", {\"mesh\": \"d.mesh\", \"materal\": \"x\", " BOUNDS "}]",
    };
    for (size_t i = 0; i < 3; i++) {
        request(f, "PUT", path, bad[i], NULL, NULL, &r);
        if (r.status != 400 || strncmp(string_at(r.json, "path"), "mesh[1]", 7))
            fail_msg("%s: %d %s", bad[i], r.status, r.body);
        reply_free(&r);
        char *after = component_text(f, id, "mesh");
        if (strcmp(after, before)) fail_msg("after %s:\n%s\nbefore:\n%s", bad[i], after, before);
        free(after);
    }
    free(before);
    stop(f);
}

static void Inspect_create_and_destroy_entities(void **state)
{
    fixture *f = *state;
    reply r;
    char path[96];
    start(f, NULL);
    request(f, "POST", "/api/entities",
            "{\"id\": \"lamp\", \"debug_name\": \"Lamp\", \"transform\": {\"position\": [2, 3, "
            "4], \"parent\": \"street\"}}",
            NULL, NULL, &r);
    expect_status(&r, 201, "create");
    char id[32];
    snprintf(id, sizeof id, "%s", string_at(r.json, "id"));
    assert_string_equal(string_at(r.json, "scene_id"), "lamp");
    reply_free(&r);
    request(f, "POST", "/api/entities", "{\"id\": \"street\"}", NULL, NULL, &r);
    expect_status(&r, 409, "duplicate id");
    reply_free(&r);
    request(f, "POST", "/api/entities", "{\"id\": \"x\", \"transform\": {\"scale\": [1, 1]}}", NULL,
            NULL, &r);
    expect_status(&r, 400, "bad entity");
    assert_string_equal(string_at(r.json, "path"), "transform.scale");
    reply_free(&r);
    get(f, "/api/world", &r);
    assert_int_equal((int)number_at(r.json, "entities"), 40);
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    request(f, "DELETE", path, NULL, NULL, NULL, &r);
    expect_status(&r, 200, "destroy");
    reply_free(&r);
    get(f, path, &r);
    expect_status(&r, 404, "destroyed");
    reply_free(&r);
    request(f, "DELETE", path, NULL, NULL, NULL, &r);
    expect_status(&r, 404, "destroyed twice");
    reply_free(&r);
    stop(f);
}

/* POST to path with body; expect status; the answer's frame (GET /api/control's). */
static double control_call(const fixture *f, const char *method, const char *path, const char *body,
                           int status)
{
    reply r;
    request(f, method, path, body, NULL, NULL, &r);
    char what[256];
    snprintf(what, sizeof what, "%s %s %s", method, path, body ? body : "");
    expect_status(&r, status, what);
    double frame = status == 200 ? number_at(r.json, "frame") : -1;
    reply_free(&r);
    return frame;
}

/* Wait (the frames run at 60 Hz) until GET /api/control says frame `want`. */
static void wait_frame(const fixture *f, double want)
{
    double got = -1;
    for (int k = 0; k < 500 && got != want; k++) {
        if (k) usleep(20000);
        got = control_call(f, "GET", "/api/control", NULL, 200);
        if (got > want) fail_msg("frame %.0f, past %.0f: a paused host ran frames", got, want);
    }
    if (got != want) fail_msg("frame %.0f, never %.0f", got, want);
}

/* Issue 36: pause, step N, a kept snapshot restored (an entity made after it is gone again,
 * the frame number back), and every bad call refused with its status. */
static void Inspect_frame_controls_pause_step_restore_and_refuse_bad_calls(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    double frame = control_call(f, "POST", "/api/control", "{\"pause\": true}", 200);
    wait_frame(f, frame);
    control_call(f, "POST", "/api/control", "{\"step\": 3}", 200);
    wait_frame(f, frame + 3);
    control_call(f, "POST", "/api/snapshots", "{\"name\": \"before-lamp\"}", 200);
    request(f, "POST", "/api/entities", "{\"id\": \"lamp\", \"debug_name\": \"Lamp\"}", NULL, NULL,
            &r);
    expect_status(&r, 201, "create");
    reply_free(&r);
    control_call(f, "POST", "/api/control", "{\"step\": 10}", 200);
    wait_frame(f, frame + 13);
    assert_true(control_call(f, "POST", "/api/snapshots/before-lamp/restore", "{}", 200) ==
                frame + 3);
    get(f, "/api/world", &r);
    assert_int_equal((int)number_at(r.json, "entities"), 39); /* the lamp came after it */
    reply_free(&r);
    control_call(f, "POST", "/api/control", "{\"step\": 0}", 400);
    control_call(f, "POST", "/api/control", "{\"pause\": 1}", 400);
    control_call(f, "POST", "/api/control", "{\"time_scale\": -1}", 400);
    control_call(f, "POST", "/api/control", "{\"pause\": true, \"step\": 2}", 400);
    control_call(f, "POST", "/api/control", "[1]", 400);
    control_call(f, "POST", "/api/snapshots", "{\"name\": \"a b\"}", 400);
    control_call(f, "POST", "/api/snapshots/nope/restore", "{}", 404);
    control_call(f, "POST", "/api/loop", "{\"frames\": 0}", 400);
    control_call(f, "POST", "/api/loop", "{\"frames\": 5, \"snapshot\": \"nope\"}", 404);
    control_call(f, "PUT", "/api/control", "{}", 405);
    control_call(f, "DELETE", "/api/snapshots/before-lamp", NULL, 200);
    control_call(f, "DELETE", "/api/snapshots/before-lamp", NULL, 404);
    control_call(f, "POST", "/api/control", "{\"pause\": false}", 200);
    stop(f);
}

static void Inspect_token_host_size_and_read_only_are_enforced(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, (const char *const[]){"--inspect-read-only", NULL});
    request(f, "GET", "/api/world", NULL, NULL, "", &r);
    expect_status(&r, 403, "no token");
    reply_free(&r);
    request(f, "GET", "/api/world", NULL, NULL, "00000000000000000000000000000000", &r);
    expect_status(&r, 403, "wrong token");
    reply_free(&r);
    request(f, "GET", "/api/world", NULL, "evil.example:80", NULL, &r);
    expect_status(&r, 403, "DNS rebinding");
    reply_free(&r);
    request(f, "GET", "/", NULL, "evil.example", NULL, &r);
    expect_status(&r, 403, "page under another name");
    reply_free(&r);
    request(f, "GET", "/api/world", NULL, "localhost", NULL, &r);
    expect_status(&r, 200, "localhost");
    assert_null(strstr(r.body, "Access-Control"));
    reply_free(&r);
    request(f, "OPTIONS", "/api/world", NULL, NULL, NULL, &r);
    expect_status(&r, 405, "OPTIONS");
    reply_free(&r);
    request(f, "PATCH", "/api/entities/1.0/transform", "{\"position\": [0, 0, 0]}", NULL, NULL, &r);
    expect_status(&r, 403, "read-only PATCH");
    reply_free(&r);
    char *big = malloc((1u << 20) + 100);
    memset(big, ' ', (1u << 20) + 99);
    big[(1u << 20) + 99] = '\0';
    big[0] = '1';
    request(f, "POST", "/api/entities", big, NULL, NULL, &r);
    free(big);
    expect_status(&r, 413, "over 1 MiB");
    reply_free(&r);
    request(f, "POST", "/api/entities", "{\"id\": \"x\"}", NULL, NULL, &r);
    expect_status(&r, 403, "read-only");
    reply_free(&r);
    request(f, "DELETE", "/api/entities/1.0", NULL, NULL, NULL, &r);
    expect_status(&r, 403, "read-only delete");
    reply_free(&r);
    get(f, "/api/world", &r);
    assert_int_equal((int)number_at(r.json, "entities"), 39);
    reply_free(&r);
    stop(f);
}

/* Issue 31 item 12: tokens and Host headers that nearly pass: an empty token, the first
 * half of the token, the token and more, Host names that start like a good one, an empty
 * Host and none at all: each 403, the page too. */
static void Inspect_near_miss_tokens_and_hosts_are_refused(void **state)
{
    fixture *f = *state;
    reply r;
    char half[32], longer[80], basic[80], head[1024];
    start(f, NULL);
    snprintf(half, sizeof half, "Bearer %.16s", f->token); /* the first half of it */
    snprintf(longer, sizeof longer, "Bearer %s0", f->token);
    snprintf(basic, sizeof basic, "Basic %s", f->token);
    const char *auths[] = {"Bearer ", "Bearer", half, longer, basic};
    for (size_t i = 0; i < sizeof auths / sizeof *auths; i++) {
        snprintf(head, sizeof head,
                 "GET /api/world HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: %s\r\n"
                 "Connection: close\r\n\r\n",
                 f->port, auths[i]);
        raw_request(f, head, &r);
        if (r.status != 403) fail_msg("Authorization: %s: %d %s", auths[i], r.status, r.body);
        reply_free(&r);
    }
    char hosts[6][96];
    snprintf(hosts[0], 96, "localhost.evil.example");
    snprintf(hosts[1], 96, "localhost.evil.example:%u", f->port);
    snprintf(hosts[2], 96, "127.0.0.1.evil");
    snprintf(hosts[3], 96, "127.0.0.1.evil:%u", f->port);
    snprintf(hosts[4], 96, "127.0.0.1:%u0", f->port);
    snprintf(hosts[5], 96, "evil.localhost");
    for (size_t i = 0; i < 6; i++) {
        for (int page = 0; page < 2; page++) {
            snprintf(head, sizeof head,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: "
                     "close\r\n\r\n",
                     page ? "/" : "/api/world", hosts[i], f->token);
            raw_request(f, head, &r);
            if (r.status != 403) fail_msg("Host %s: %d %s", hosts[i], r.status, r.body);
            reply_free(&r);
        }
    }
    snprintf(head, sizeof head,
             "GET /api/world HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n", /* no Host */
             f->token);
    raw_request(f, head, &r);
    if (r.status != 403) fail_msg("no Host: %d %s", r.status, r.body);
    reply_free(&r);
    snprintf(head, sizeof head,
             "GET /api/world HTTP/1.1\r\nHost: \r\nAuthorization: Bearer %s\r\nConnection: "
             "close\r\n\r\n",
             f->token);
    raw_request(f, head, &r);
    if (r.status != 403 && r.status != 400) fail_msg("empty Host: %d %s", r.status, r.body);
    reply_free(&r);
    get(f, "/api/world", &r); /* and the real thing still works */
    expect_status(&r, 200, "the right token and Host");
    reply_free(&r);
    stop(f);
}

static void Inspect_slow_and_vanishing_clients_never_stop_the_frames(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    int slow = connect_to(f); /* half a request, then nothing */
    send_all(slow, "GET /api/world HTTP/1.1\r\nHo", 27);
    int gone = connect_to(f); /* a request, then gone before the answer */
    send_all(gone, "GET /api/scene HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 44);
    close(gone);
    get(f, "/api/world", &r);
    double frame0 = number_at(r.json, "frame");
    reply_free(&r);
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    int a = connect_to(f), b = connect_to(f); /* two at once */
    char head[256];
    int n = snprintf(head, sizeof head,
                     "GET /api/world HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer "
                     "%s\r\nConnection: close\r\n\r\n",
                     f->port, f->token);
    send_all(a, head, (size_t)n);
    send_all(b, head, (size_t)n);
    reply ra, rb;
    read_reply(b, &rb);
    read_reply(a, &ra);
    expect_status(&ra, 200, "first of two");
    expect_status(&rb, 200, "second of two");
    assert_true(number_at(ra.json, "frame") >= frame0 + 5); /* 300 ms at 60 fps: about 18 */
    reply_free(&ra);
    reply_free(&rb);
    close(a), close(b), close(slow);
    get(f, "/api/log", &r);
    expect_status(&r, 200, "log");
    bool scene_line = false;
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(r.json, "lines"))
    {
        scene_line = scene_line || strstr(string_at(l, "msg"), "loaded 39 entities");
    }
    assert_true(scene_line);
    reply_free(&r);
    stop(f);
}

/* /api/events: Server-Sent Events of the log (a reload's lines as "reload") and one frame
 * event, from the client's Last-Event-ID; the browser's EventSource passes ?token=, which
 * no other path accepts. */
static void Inspect_events_stream_the_log_and_the_frame(void **state)
{
    fixture *f = *state;
    reply r;
    char path[128];
    start(f, NULL);
    snprintf(path, sizeof path, "/api/events?token=%s", f->token);
    request(f, "GET", path, NULL, NULL, "", &r);
    expect_status(&r, 200, "events with ?token=");
    assert_int_equal(strncmp(r.body, "retry: 100\n\n", 12), 0);
    assert_non_null(strstr(r.body, "event: log\ndata: {"));
    assert_non_null(strstr(r.body, "loaded 39 entities"));
    const char *frame = strstr(r.body, "event: frame\ndata: ");
    assert_non_null(frame);
    cJSON *fj = cJSON_Parse(frame + strlen("event: frame\ndata: "));
    assert_int_equal((int)number_at(fj, "entities"), 39);
    cJSON_Delete(fj);
    /* the id of the last log event: nothing older comes again after it */
    const char *id = NULL, *p = r.body;
    while ((p = strstr(p, "id: "))) id = p, p += 4;
    assert_non_null(id);
    long last = strtol(id + 4, NULL, 10);
    reply_free(&r);
    char head[512];
    int s = connect_to(f);
    int n = snprintf(head, sizeof head,
                     "GET /api/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                     "%s\r\nLast-Event-ID: %ld\r\nConnection: close\r\n\r\n",
                     f->token, last);
    send_all(s, head, (size_t)n);
    read_reply(s, &r);
    close(s);
    expect_status(&r, 200, "events after the last id");
    assert_null(strstr(r.body, "loaded 39 entities"));
    assert_non_null(strstr(r.body, "event: frame"));
    reply_free(&r);
    snprintf(path, sizeof path, "/api/world?token=%s", f->token);
    request(f, "GET", path, NULL, NULL, "", &r);
    expect_status(&r, 403, "?token= elsewhere");
    reply_free(&r);
    stop(f);
}

/* Edits racing hot reloads of the manager they edit: both happen between frames on the
 * main thread, so each edit lands in one version or the next, never half in each; every
 * reload keeps what the edits before it wrote. */
static void Inspect_edits_racing_reloads_of_their_manager_all_land(void **state)
{
    fixture *f = *state;
    reply r;
    char id[32], path[96], body[128], src[4200], dst[4200], tmp[4200];
    start(f, (const char *const[]){"--watch", "--reload-quiet", "0", NULL});
    id_of(f, "house1", id, sizeof id);
    snprintf(src, sizeof src, "%s/transform/transform.so", PLUGIN_DIR);
    snprintf(dst, sizeof dst, "%s/plugins/transform.so", f->dir);
    snprintf(tmp, sizeof tmp, "%s/plugins/.transform.so.tmp", f->dir);
    for (int i = 1; i <= 20; i++) {
        assert_int_equal(harness_copy_file(src, tmp, 0755), 0); /* a build, renamed in */
        assert_int_equal(rename(tmp, dst), 0);
        snprintf(path, sizeof path, "/api/entities/%s/transform", id);
        snprintf(body, sizeof body, "{\"position\": [%d, 0, 0], \"parent\": \"street\"}", i);
        request(f, "PUT", path, body, NULL, NULL, &r);
        expect_status(&r, 200, "edit during reloads");
        reply_free(&r);
        struct timespec pause = {0, 25000000}; /* over a frame: a build per frame or so */
        nanosleep(&pause, NULL);
    }
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL);
    snprintf(path, sizeof path, "/api/entities/%s", id);
    get(f, path, &r);
    assert_non_null(strstr(r.body, "\"position\":[20,0,0]"));
    reply_free(&r);
    get(f, "/api/plugins", &r);
    const cJSON *p;
    int transform_reloads = 0;
    cJSON_ArrayForEach(p, r.json)
    {
        if (!strcmp(string_at(p, "name"), "transform"))
            transform_reloads = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "reloads"));
    }
    reply_free(&r);
    if (transform_reloads < 2) { /* reloads did happen between the edits */
        harness_wait_output(&f->proc, "\x01 never printed", 0.2);
        fprintf(stderr, "%d reloads of transform; the log:\n%s\n", transform_reloads,
                f->proc.result.err ? f->proc.result.err : "");
        fail();
    }
    stop(f);
}

/* The number of entities in the scene file at path (-1: not a scene). */
static int entities_in(const char *path)
{
    char *text = harness_read_file(path, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "entities");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    cJSON_Delete(doc);
    free(text);
    return n;
}

/* Issue 33 item 3: a save from the page goes to the --save file or, by name, into the
 * --inspect-save-dir folder; never to a path the request chooses. Before, {"path": F} wrote
 * any file the user could write (a bash rc file: a shell for the token holder). */
static void Inspect_a_save_goes_only_where_the_user_chose_at_start(void **state)
{
    fixture *f = *state;
    reply r;
    char *dir = harness_join(f->dir, "saves"), *victim = harness_join(f->dir, "victim.sh");
    char *link = harness_join(dir, "link.json"), *named = harness_join(dir, "level.json");
    char body[4400];
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(harness_write_file(victim, "echo hello\n", 0600), 0);
    assert_int_equal(harness_symlink(victim, link), 0);
    start(f, (const char *const[]){"--inspect-save-dir", dir, NULL});
    snprintf(body, sizeof body, "{\"path\": \"%s\"}", victim);
    const char *refused[] = {body,
                             "{\"path\": \"x.json\"}",
                             "{\"name\": \"../victim.sh\"}",
                             "{\"name\": \"../victim.json\"}",
                             "{\"name\": \".hidden.json\"}",
                             "{\"name\": \"a/b.json\"}",
                             "{\"name\": \"level\"}",
                             "{\"name\": \".json\"}",
                             "{\"name\": 7}",
                             "{\"name\": \"link.json\"}", /* a symlink to victim.sh */
                             "{\"name\": \"level.json\", \"path\": \"/tmp/x.json\"}",
                             "[]",
                             NULL};
    for (size_t i = 0; refused[i]; i++) {
        request(f, "POST", "/api/save", refused[i], NULL, NULL, &r);
        if (r.status != 400) fail_msg("%s: %d %s", refused[i], r.status, r.body);
        reply_free(&r);
    }
    char *text = harness_read_file(victim, NULL);
    assert_string_equal(text, "echo hello\n"); /* untouched */
    free(text);
    request(f, "POST", "/api/save", "{}", NULL, NULL, &r); /* the --save file */
    expect_status(&r, 200, "save to the --save file");
    assert_string_equal(string_at(r.json, "saved"), f->save);
    reply_free(&r);
    assert_int_equal(entities_in(f->save), 39);
    request(f, "POST", "/api/save", "", NULL, NULL, &r); /* no body: the same */
    expect_status(&r, 200, "save with no body");
    reply_free(&r);
    request(f, "POST", "/api/save", "{\"name\": \"level.json\"}", NULL, NULL, &r);
    expect_status(&r, 200, "save by name into the folder");
    assert_string_equal(string_at(r.json, "saved"), named);
    reply_free(&r);
    assert_int_equal(entities_in(named), 39);
    get(f, "/api/world", &r); /* the page learns where it may save */
    const cJSON *save = cJSON_GetObjectItemCaseSensitive(r.json, "save");
    assert_string_equal(string_at(save, "file"), f->save);
    assert_string_equal(string_at(save, "dir"), dir);
    reply_free(&r);
    stop(f);
    free(dir), free(victim), free(link), free(named);
}

/* Without --save and --inspect-save-dir the page cannot save at all (409, says how). */
static void Inspect_without_a_save_file_or_folder_nothing_is_saved(void **state)
{
    fixture *f = *state;
    reply r;
    f->no_save = true;
    start(f, NULL);
    request(f, "POST", "/api/save", "{}", NULL, NULL, &r);
    expect_status(&r, 409, "no --save");
    assert_non_null(strstr(string_at(r.json, "error"), "--save FILE"));
    reply_free(&r);
    request(f, "POST", "/api/save", "{\"name\": \"a.json\"}", NULL, NULL, &r);
    expect_status(&r, 409, "no --inspect-save-dir");
    reply_free(&r);
    get(f, "/api/world", &r);
    assert_null(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r.json, "save"), "file"));
    reply_free(&r);
    stop(f);
}

/* --inspect-save-dir is checked at start: a folder that is not there, a file, a folder
 * others may write: one line naming it, exit status 2. */
static void Inspect_a_bad_save_folder_is_refused_at_start(void **state)
{
    fixture *f = *state;
    char *open_dir = harness_join(f->dir, "open"), *file = harness_join(f->dir, "file");
    char *missing = harness_join(f->dir, "missing");
    assert_int_equal(mkdir(open_dir, 0700), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    assert_int_equal(harness_write_file(file, "", 0600), 0);
    const char *dirs[] = {missing, file, open_dir};
    const char *why[] = {"No such file", "not a folder", "writable by others"};
    for (size_t i = 0; i < 3; i++) {
        harness_output out;
        const char *argv[] = {ECS_HOST_PATH, "--inspect", "0", "--inspect-save-dir",
                              dirs[i],       "--frames",  "1", PLUGIN_DIR,
                              NULL};
        assert_int_equal(harness_run(&out, 20, argv), 0);
        if (out.exit_code != 2 || !strstr(out.err, "--inspect-save-dir") ||
            !strstr(out.err, why[i]))
            fail_msg("%s: exit %d: %s", dirs[i], out.exit_code, out.err);
        harness_output_free(&out);
    }
    free(open_dir), free(file), free(missing);
}

static void Inspect_downloads_the_world(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    get(f, "/api/scene", &r);
    expect_status(&r, 200, "download");
    assert_non_null(r.json);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "entities")), 39);
    reply_free(&r);
    stop(f);
}

static void Inspect_bad_address_is_one_line_and_exit_1(void **state)
{
    fixture *f = *state;
    harness_output out;
    const char *argv[] = {ECS_HOST_PATH, "--inspect", "nonsense", "--frames",
                          "1",           PLUGIN_DIR,  NULL};
    assert_int_equal(harness_run(&out, 10, argv), 0);
    assert_int_equal(out.exit_code, 1);
    assert_non_null(strstr(out.err, "--inspect nonsense: expected PORT or ADDRESS:PORT"));
    harness_output_free(&out);
    start(f, NULL); /* its port is taken now */
    char spec[32];
    snprintf(spec, sizeof spec, "127.0.0.1:%u", f->port);
    const char *again[] = {ECS_HOST_PATH, "--inspect", spec, "--frames", "1", PLUGIN_DIR, NULL};
    assert_int_equal(harness_run(&out, 10, again), 0);
    assert_int_equal(out.exit_code, 1);
    assert_non_null(strstr(out.err, "[error] inspect: cannot serve on 127.0.0.1:"));
    harness_output_free(&out);
    stop(f);
}

/* A scene of n entities from gen-scene (trees of 1000 named "tree T node K", scene ids
 * "n<i>") in f->dir; the path (malloc'd). */
static char *big_scene(fixture *f, unsigned n)
{
    char *path = harness_join(f->dir, "big.json"), cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' %u > '%s'", GEN_SCENE_PATH, n, path);
    harness_output out;
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    assert_int_equal(harness_run(&out, 120, argv), 0);
    assert_int_equal(out.exit_code, 0);
    harness_output_free(&out);
    return path;
}

/* Start on a scene of n entities (more options in extra) and wait for its load. */
static void start_big(fixture *f, unsigned n, const char *fps, char **scene)
{
    *scene = big_scene(f, n);
    start(f, (const char *const[]){"--scene", *scene, "--fps", fps, "-v", NULL});
    if (!harness_wait_output(&f->proc, "scene: loaded", 200))
        fail_msg("the scene did not load:\n%s", f->proc.result.err);
}

/* Issue 33 item 1: a search walks the world a slice per frame boundary (--fps 0: frames
 * back to back, one slice between two), so the world runs on meanwhile; the answer says
 * what it cost. Before, the whole walk held one frame (9.3 s at 1 M entities). */
static void Inspect_a_search_of_300000_entities_runs_between_frames(void **state)
{
    fixture *f = *state;
    reply r;
    char *scene;
    start_big(f, 300000, "0", &scene);
    get(f, "/api/entities?name=node%20567&limit=5", &r);
    expect_status(&r, 200, "search");
    assert_int_equal((int)number_at(r.json, "total"), 300); /* one in each tree of 1000 */
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.json, "items"), *it;
    assert_int_equal(cJSON_GetArraySize(items), 5);
    cJSON_ArrayForEach(it, items)
    {
        if (!strstr(string_at(it, "name"), "node 567")) fail_msg("%s", r.body);
    }
    const cJSON *cost = cJSON_GetObjectItemCaseSensitive(r.json, "cost");
    if (number_at(cost, "slices") < 2 || number_at(cost, "frames") < 2)
        fail_msg("the search was not sliced across frames: %s", r.body);
    reply_free(&r);
    get(f, "/api/entities?name=NODE%20567&offset=298&limit=5", &r); /* any case; the last page */
    assert_int_equal((int)number_at(r.json, "total"), 300);
    items = cJSON_GetObjectItemCaseSensitive(r.json, "items");
    assert_int_equal(cJSON_GetArraySize(items), 2);
    assert_string_equal(string_at(cJSON_GetArrayItem(items, 1), "name"), "tree 299 node 567");
    reply_free(&r);
    get(f, "/api/entities?name=n299999&limit=5", &r); /* a scene id */
    assert_int_equal((int)number_at(r.json, "total"), 1);
    assert_string_equal(
        string_at(cJSON_GetObjectItemCaseSensitive(r.json, "items")->child, "scene_id"), "n299999");
    reply_free(&r);
    stop(f);
    free(scene);
}

/* A search whose client hung up (the page aborts one a newer query made useless) is
 * dropped at its next slice, unanswered; the others go on. */
static void Inspect_a_search_whose_client_hung_up_is_dropped(void **state)
{
    fixture *f = *state;
    reply r;
    char *scene, head[512];
    start_big(f, 300000, "0", &scene);
    kill(f->proc.pid, SIGSTOP); /* the requests all arrive before the host looks at them */
    int n = snprintf(head, sizeof head,
                     "GET /api/entities?name=node HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                     "Authorization: Bearer %s\r\nConnection: close\r\n\r\n",
                     f->port, f->token);
    for (int i = 0; i < 3; i++) { /* asked, then the page moved on */
        int s = connect_to(f);
        send_all(s, head, (size_t)n);
        close(s);
    }
    kill(f->proc.pid, SIGCONT);
    get(f, "/api/entities?name=node%20567&limit=1", &r); /* answered after them */
    expect_status(&r, 200, "the search after the dropped ones");
    assert_int_equal((int)number_at(r.json, "total"), 300);
    reply_free(&r);
    stop(f);
    const char *line = f->proc.result.err; /* -v: one line each, before any work was done */
    int dropped = 0;
    while ((line = strstr(line, "a search dropped after 0 slices: its client hung up")))
        dropped++, line++;
    if (dropped != 3) fail_msg("%d searches dropped, not 3:\n%s", dropped, f->proc.result.err);
    free(scene);
}

/* Put build `name` of tests/plugins_reload in folder as `as` (copied beside, renamed in:
 * the way a linker's output lands). */
static void land_build(const char *folder, const char *name, const char *as)
{
    char src[4200], tmp[4200], dst[4200];
    snprintf(src, sizeof src, "%s/%s.so", RELOAD_PLUGIN_DIR, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", folder, as);
    snprintf(dst, sizeof dst, "%s/%s", folder, as);
    assert_int_equal(harness_copy_file(src, tmp, 0755), 0);
    assert_int_equal(rename(tmp, dst), 0);
}

/* Issue 36: a snapshot kept in memory outlives a reload that lays transform's state out anew
 * (transform_layout3: another snapshot_version): its transform part was taken again as JSON
 * before the swap, so restoring it after is no refusal; an entity made after it goes away. */
static void Inspect_a_kept_snapshot_survives_a_reload_that_changes_a_layout(void **state)
{
    fixture *f = *state;
    reply r;
    char folder[4200];
    start(f, (const char *const[]){"--watch", NULL});
    snprintf(folder, sizeof folder, "%s/plugins", f->dir);
    control_call(f, "POST", "/api/snapshots", "{\"name\": \"kept\"}", 200);
    request(f, "POST", "/api/entities", "{\"id\": \"lamp\", \"debug_name\": \"Lamp\"}", NULL, NULL,
            &r);
    expect_status(&r, 201, "create");
    reply_free(&r);
    land_build(folder, "transform_layout3", "transform.so");
    if (!harness_wait_output(&f->proc, "reload: transform", 60))
        fail_msg("no reload of transform:\n%s", f->proc.result.err);
    control_call(f, "POST", "/api/snapshots/kept/restore", "{}", 200);
    get(f, "/api/world", &r);
    assert_int_equal((int)number_at(r.json, "entities"), 39);
    reply_free(&r);
    stop(f);
    if (strstr(f->proc.result.err, "[error]")) fail_msg("an error:\n%s", f->proc.result.err);
}

/* The kinds of plugin `name`'s history ("reload crash rollback"), and its entries' text
 * joined by " | " into what (may be NULL), from /api/plugins. */
static void history_of(const fixture *f, const char *name, char *kinds, size_t size, char *what,
                       size_t what_size)
{
    reply r;
    get(f, "/api/plugins", &r);
    expect_status(&r, 200, "plugins");
    kinds[0] = '\0';
    if (what) what[0] = '\0';
    const cJSON *p, *h;
    cJSON_ArrayForEach(p, r.json)
    {
        if (strcmp(string_at(p, "name"), name)) continue;
        cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(p, "reloads"))
        {
            size_t n = strlen(kinds);
            snprintf(kinds + n, size - n, "%s%s", n ? " " : "", string_at(h, "kind"));
            if (what) {
                n = strlen(what);
                snprintf(what + n, what_size - n, "%s%s", n ? " | " : "", string_at(h, "what"));
            }
        }
    }
    reply_free(&r);
}

/* Wait until plugin name's history kinds are `want` (the host reloads between frames). */
static void wait_history(const fixture *f, const char *name, const char *want, char *what,
                         size_t what_size)
{
    char kinds[512] = "";
    for (int i = 0; i < 200; i++) {
        history_of(f, name, kinds, sizeof kinds, what, what_size);
        if (!strcmp(kinds, want)) return;
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    fail_msg("the history of %s is \"%s\", not \"%s\"", name, kinds, want);
}

/* Issue 33 item 4: crashes, rollbacks, unloads and parks are entries of a plugin's history,
 * with the reason, beside its reloads: a build that crashed in its update and was rolled
 * back no longer shows as a plain reload. Before, only reloads and refused builds were
 * noted: a crash, its rollback, an unload after it, a park left no entry. */
static void Inspect_crashes_rollbacks_unloads_and_parks_are_in_the_history(void **state)
{
    fixture *f = *state;
    char folder[4200], what[4000];
    snprintf(folder, sizeof folder, "%s/plugins", f->dir);
    assert_int_equal(mkdir(folder, 0700), 0);
    land_build(folder, "rl_crash", "rl.so"); /* crashes from its first update: no good build */
    land_build(folder, "dep_c", "c.so");
    land_build(folder, "dep_b", "b.so"); /* needs c */
    const char *argv[] = {ECS_HOST_PATH, "--safe", "--watch", "--reload-quiet", "0", "--inspect",
                          "0",           "--fps",  "60",      folder,           NULL};
    assert_int_equal(harness_start(&f->proc, argv), 0);
    assert_true(harness_wait_output(&f->proc, "inspect: open http://127.0.0.1:", 10));
    assert_int_equal(sscanf(strstr(f->proc.result.err, "open http://"),
                            "open http://127.0.0.1:%u/#token=%63[0-9a-f]", &f->port, f->token),
                     2);
    wait_history(f, "rl", "crash unload", what, sizeof what);
    assert_non_null(strstr(what, "crashed with SIGSEGV in rl"));
    assert_non_null(strstr(what, "unloaded after its crash"));
    land_build(folder, "rl_v1", "rl.so"); /* a good build: back */
    wait_history(f, "rl", "crash unload back", what, sizeof what);
    land_build(folder, "rl_crash", "rl.so"); /* swapped in, crashes, rolled back to 1 */
    wait_history(f, "rl", "crash unload back reload crash rollback", what, sizeof what);
    assert_non_null(strstr(what, "1 -> crash: same state layout"));
    assert_non_null(strstr(what, "rolled back from the crashed crash (build of ")); /* and */
    assert_non_null(strstr(what, ") to 1 (build of "));                             /* its id */
    char manifest[4300];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", folder);
    assert_int_equal(harness_write_file(
                         manifest, "{\"plugins\": [{\"name\": \"c\", \"disabled\": true}]}", 0644),
                     0);
    wait_history(f, "c", "unload", what, sizeof what);
    assert_non_null(strstr(what, "disabled by manifest.json"));
    wait_history(f, "b", "park", what, sizeof what);
    assert_non_null(strstr(what, "parked: it depends on plugin 'c'"));
    assert_int_equal(harness_write_file(manifest, "{\"plugins\": []}", 0644), 0);
    wait_history(f, "b", "park back", what, sizeof what);
    stop(f);
}

/* A line "Key:  N kB" of /proc/PID/status, in kB (-1: none). */
static long status_kb(pid_t pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) kb = strtol(line + strlen(key) + 1, NULL, 10);
    if (f) fclose(f);
    return kb;
}

/* Issue 33 item 10: GET /api/scene is written as the client reads it (chunked, a few
 * entities at a time between frames): no file, no copy of the whole document in the host.
 * Before, the world was saved to /tmp and read back into memory whole (513 MB at 1 M
 * entities, +385 MB of memory, one 1.7 s frame). The host's peak memory (VmHWM, reset
 * through clear_refs) grows by less than a third of the document. */
static void Inspect_the_download_is_written_as_it_is_read(void **state)
{
    fixture *f = *state;
    reply r;
    char *scene, path[64];
#if defined(__SANITIZE_ADDRESS__) /* freed memory waits in ASan's quarantine (256 MB): none */
    char asan[1024], *was = getenv("ASAN_OPTIONS") ? strdup(getenv("ASAN_OPTIONS")) : NULL;
    snprintf(asan, sizeof asan, "%s:quarantine_size_mb=0:thread_local_quarantine_size_kb=0",
             was ? was : "");
    setenv("ASAN_OPTIONS", asan, 1); /* for this host only */
    start_big(f, 300000, "60", &scene);
    if (was) setenv("ASAN_OPTIONS", was, 1);
    free(was);
#else
    start_big(f, 300000, "60", &scene);
#endif
    get(f, "/api/world", &r); /* the load is over */
    reply_free(&r);
    snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)f->proc.pid);
    FILE *cr = fopen(path, "w");
    assert_non_null(cr);
    fputs("5", cr); /* VmHWM = VmRSS from here */
    fclose(cr);
    long before = status_kb(f->proc.pid, "VmHWM:");
    get(f, "/api/scene", &r);
    long grew = status_kb(f->proc.pid, "VmHWM:") - before;
    expect_status(&r, 200, "download");
    assert_true(r.chunked);
    size_t len = strlen(r.body), ids = 0;
    for (const char *p = r.body; (p = memchr(p, '"', len - (size_t)(p - r.body))); p++)
        ids += !strncmp(p, "\"id\":", 5); /* (strstr: strlen of the rest each time) */
    assert_int_equal(ids, 300000);
    assert_int_equal(strncmp(r.body, "{\n\t\"version\":\t1,\n\t\"entities\":\t[{", 31), 0);
    assert_string_equal(r.body + len - 3, "]\n}\n" + 1);
    reply_free(&r);
    if (grew * 1024 > (long)len / 3)
        fail_msg("the host's peak memory grew by %ld kB for a %zu-byte download", grew, len);
    stop(f);
    free(scene);
}

/* Issue 33 item 11: slow sockets without a token (a byte now and then, never the end of
 * their headers) cannot lock the inspector: 70 of them (the old limit was 32), then the
 * page's request is answered; each is closed within the headers' deadline (5 s) however it
 * trickles; a request without the token is refused when its headers come, its body never
 * read (no "100 Continue"). Before, the 33rd connection was not even accepted. */
static void Inspect_slow_sockets_without_a_token_never_lock_it_out(void **state)
{
    fixture *f = *state;
    reply r;
    enum { SLOW = 70 };
    int slow[SLOW];
    start(f, NULL);
    for (int i = 0; i < SLOW; i++) {
        slow[i] = connect_to(f);
        send_all(slow[i], "GET /api/world HTTP/1.1\r\nHo", 27);
    }
    get(f, "/api/world", &r); /* the page's request, among them */
    expect_status(&r, 200, "a request with its headers ready, beside 70 slow sockets");
    reply_free(&r);
    int open = SLOW;
    for (int round = 0; open && round < 60; round++) { /* a byte each every 0.5 s */
        struct timespec half = {0, 500000000};
        nanosleep(&half, NULL);
        for (int i = 0; i < SLOW; i++) {
            if (slow[i] < 0) continue;
            char b;
            struct pollfd p = {slow[i], POLLIN, 0};
            if ((poll(&p, 1, 0) == 1 && recv(slow[i], &b, 1, MSG_DONTWAIT) <= 0) ||
                send(slow[i], "s", 1, MSG_NOSIGNAL) < 0) {
                close(slow[i]);
                slow[i] = -1, open--;
            }
        }
    }
    if (open) fail_msg("%d slow sockets still open after 30 s", open);
    char head[512];
    snprintf(head, sizeof head,
             "POST /api/entities HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nExpect: 100-continue\r\n"
             "Content-Length: 500000\r\nConnection: close\r\n\r\n",
             f->port);
    raw_request(f, head, &r); /* no token: 403 at once, nothing asked of the body */
    expect_status(&r, 403, "no token, a body announced");
    reply_free(&r);
    int s = connect_to(f); /* the same, read to the first line */
    send_all(s, head, strlen(head));
    char first[64] = "";
    struct pollfd p = {s, POLLIN, 0};
    if (poll(&p, 1, 10000) == 1) recv(s, first, sizeof first - 1, 0);
    close(s);
    if (strncmp(first, "HTTP/1.1 403", 12)) fail_msg("the first answer: %.20s", first);
    stop(f);
}

/* Issue 33 item 12: the token is never in the inspector's log ring (the page's log panel,
 * /api/log, /api/events); the URL with it is in a file only this user may read under
 * $XDG_RUNTIME_DIR, named in the log (with -q too), removed at exit. Before, the URL line
 * was in the ring, and -q left no way to get the token. */
static void Inspect_the_token_stays_out_of_the_log_and_is_in_a_private_file(void **state)
{
    fixture *f = *state;
    reply r;
    char path[128], url_file[4200];
    char *was = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
    setenv("XDG_RUNTIME_DIR", f->dir, 1);
    start(f, NULL);
    if (was)
        setenv("XDG_RUNTIME_DIR", was, 1);
    else
        unsetenv("XDG_RUNTIME_DIR");
    get(f, "/api/log", &r);
    expect_status(&r, 200, "log");
    assert_non_null(strstr(r.body, "loaded 39 entities")); /* the ring has the lines */
    assert_null(strstr(r.body, f->token));
    reply_free(&r);
    snprintf(path, sizeof path, "/api/events?token=%s", f->token);
    request(f, "GET", path, NULL, NULL, "", &r);
    expect_status(&r, 200, "events");
    assert_null(strstr(r.body, "#token="));
    reply_free(&r);
    snprintf(url_file, sizeof url_file, "%s/ecs-host-inspect-%d.url", f->dir, (int)f->proc.pid);
    struct stat st;
    assert_int_equal(stat(url_file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *text = harness_read_file(url_file, NULL);
    assert_non_null(strstr(text, f->token));
    free(text);
    stop(f);
    assert_non_null(strstr(f->proc.result.err, url_file)); /* the log says where */
    assert_int_not_equal(stat(url_file, &st), 0);          /* gone at exit */
    harness_proc_discard(&f->proc);
    /* -q: no token on the terminal, the file named */
    setenv("XDG_RUNTIME_DIR", f->dir, 1);
    const char *argv[] = {ECS_HOST_PATH, "-q", "--inspect", "0",
                          "--frames",    "30", PLUGIN_DIR,  NULL};
    harness_output out;
    assert_int_equal(harness_run(&out, 30, argv), 0);
    if (was)
        setenv("XDG_RUNTIME_DIR", was, 1);
    else
        unsetenv("XDG_RUNTIME_DIR");
    free(was);
    assert_int_equal(out.exit_code, 0);
    assert_null(strstr(out.err, "#token="));
    assert_non_null(strstr(out.err, "the URL with its token is also in"));
    harness_output_free(&out);
}

/* Issue 33 item 13: Host or Authorization twice (400: which one counts?), a NUL in a header
 * or a %00 in the path (400: it would cut them), the names localhost and [::1] in any case
 * (200), a name allowed with --inspect-host (200, 403 without); every answer forbids frames
 * (Content-Security-Policy: frame-ancestors 'none'). */
static void Inspect_doubled_headers_nuls_and_host_names(void **state)
{
    fixture *f = *state;
    reply r;
    char head[1024];
    start(f, (const char *const[]){"--inspect-host", "devbox.lan", NULL});
    struct {
        const char *fmt;
        int status;
    } cases[] = {
        {"GET /api/world HTTP/1.1\r\nHost: 127.0.0.1:%1$u\r\nHost: evil.example\r\n"
         "Authorization: Bearer %2$s\r\nConnection: close\r\n\r\n",
         400},
        {"GET /api/world HTTP/1.1\r\nHost: 127.0.0.1:%1$u\r\nAuthorization: Bearer %2$s\r\n"
         "Authorization: Bearer 0\r\nConnection: close\r\n\r\n",
         400},
        {"GET /api/world HTTP/1.1\r\nHost: LOCALHOST:%1$u\r\nAuthorization: Bearer %2$s\r\n"
         "Connection: close\r\n\r\n",
         200},
        {"GET /api/world HTTP/1.1\r\nHost: [::1]:%1$u\r\nAuthorization: Bearer %2$s\r\n"
         "Connection: close\r\n\r\n",
         200},
        {"GET /api/world HTTP/1.1\r\nHost: DevBox.lan:%1$u\r\nAuthorization: Bearer %2$s\r\n"
         "Connection: close\r\n\r\n",
         200},
        {"GET /api/world HTTP/1.1\r\nHost: otherbox.lan:%1$u\r\nAuthorization: Bearer %2$s\r\n"
         "Connection: close\r\n\r\n",
         403},
        {"GET /api/entities/1.0%%00/x HTTP/1.1\r\nHost: 127.0.0.1:%1$u\r\n"
         "Authorization: Bearer %2$s\r\nConnection: close\r\n\r\n",
         400},
        {"GET /api/entities?name=a%%00b HTTP/1.1\r\nHost: 127.0.0.1:%1$u\r\n"
         "Authorization: Bearer %2$s\r\nConnection: close\r\n\r\n",
         400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(head, sizeof head, cases[i].fmt, f->port, f->token);
        raw_request(f, head, &r);
        if (r.status != cases[i].status)
            fail_msg("case %zu: %d, not %d: %s", i, r.status, cases[i].status, r.body);
        reply_free(&r);
    }
    int n = snprintf(head, sizeof head,
                     "GET /api/world HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nX-A: a\1b\r\n"
                     "Authorization: Bearer %s\r\nConnection: close\r\n\r\n",
                     f->port, f->token);
    *strchr(head, '\1') = '\0'; /* a NUL inside a header's value */
    int s = connect_to(f);
    send_all(s, head, (size_t)n);
    read_reply(s, &r);
    close(s);
    if (r.status != 400) fail_msg("a NUL in a header: %d %s", r.status, r.body);
    reply_free(&r);
    for (int page = 0; page < 2; page++) { /* the headers, read raw */
        snprintf(head, sizeof head,
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n"
                 "Connection: close\r\n\r\n",
                 page ? "/" : "/api/world", f->port, f->token);
        s = connect_to(f);
        send_all(s, head, strlen(head));
        char buf[8192] = "";
        size_t got = 0;
        for (ssize_t k;
             got < sizeof buf - 1 && (k = recv(s, buf + got, sizeof buf - 1 - got, 0)) > 0;)
            got += (size_t)k;
        close(s);
        buf[got] = '\0';
        assert_non_null(strstr(buf, "frame-ancestors 'none'"));
        assert_non_null(strcasestr(buf, "\r\nContent-Security-Policy: "));
    }
    stop(f);
}

/* Issue 33 item 5: the roots of the hierarchy (no parent), a parent's children with how
 * many children each has, a search's items with their path (root first). */
static void Inspect_roots_children_and_paths_make_the_tree(void **state)
{
    fixture *f = *state;
    reply r;
    char street[32], path[96];
    start(f, NULL);
    get(f, "/api/entities?roots=1&limit=1000", &r);
    expect_status(&r, 200, "roots");
    const cJSON *it;
    int roots = 0;
    bool street_root = false;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        roots++;
        if (!cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(it, "parent")))
            fail_msg("a root with a parent: %s", cJSON_PrintUnformatted(it));
        if (!strcmp(string_at(it, "scene_id"), "street"))
            street_root = true, snprintf(street, sizeof street, "%s", string_at(it, "id"));
    }
    assert_true(street_root);
    assert_int_equal(roots, (int)number_at(r.json, "total"));
    assert_true(roots > 1 && roots < 39);
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s/children?limit=1000", street);
    get(f, path, &r);
    expect_status(&r, 200, "children");
    int n = 0;
    unsigned last = 0;
    bool house1 = false;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        n++;
        assert_string_equal(string_at(it, "parent"), "street");
        unsigned idx = (unsigned)number_at(it, "raw") & 0x3FFFFF;
        assert_true(idx > last); /* in index order */
        last = idx;
        if (!strcmp(string_at(it, "scene_id"), "house1"))
            house1 = number_at(it, "children") == 3; /* door, two windows */
    }
    assert_true(house1);
    assert_int_equal(n, (int)number_at(r.json, "total"));
    reply_free(&r);
    get(f, "/api/entities?name=handle&limit=10", &r); /* street > house > door > handle */
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json, "items"))
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
        assert_int_equal(cJSON_GetArraySize(p), 3);
        assert_string_equal(string_at(p->child, "name"), "Main street");
    }
    reply_free(&r);
    get(f, "/api/entities/1.0/children/x", &r);
    expect_status(&r, 405, "not a path of children");
    reply_free(&r);
    stop(f);
}

/* Issue 33 item 15: a query in the views' terms lists the matches (paged like the list),
 * with their count and what the walk cost; a name that is no manager is a 400. */
static void Inspect_a_query_lists_its_matches(void **state)
{
    fixture *f = *state;
    reply r, all;
    start(f, NULL);
    get(f, "/api/entities?limit=1000", &all);
    int want = 0;
    const cJSON *it, *c;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(all.json, "items"))
    {
        bool tf = false, mesh = false;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(it, "components"))
        {
            tf = tf || !strcmp(c->valuestring, "transform");
            mesh = mesh || !strcmp(c->valuestring, "mesh");
        }
        want += tf && !mesh;
    }
    reply_free(&all);
    assert_true(want > 0);
    get(f, "/api/entities?query=%7Btransform%2C%20not%20mesh%7D&limit=1000", &r);
    expect_status(&r, 200, "query");
    assert_int_equal((int)number_at(r.json, "total"), want);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "items")), want);
    assert_true(number_at(cJSON_GetObjectItemCaseSensitive(r.json, "walk"), "slices") >= 1);
    reply_free(&r);
    get(f, "/api/entities?query=transform,!mesh&offset=1&limit=1", &r); /* the other spelling */
    assert_int_equal((int)number_at(r.json, "total"), want);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "items")), 1);
    reply_free(&r);
    const char *bad[] = {"/api/entities?query=%7Bnothing%7D", "/api/entities?query=not%20mesh",
                         "/api/entities?query=transform,not"};
    for (size_t i = 0; i < 3; i++) {
        get(f, bad[i], &r);
        expect_status(&r, 400, bad[i]);
        assert_non_null(strstr(string_at(r.json, "error"), "query"));
        reply_free(&r);
    }
    stop(f);
}

/* The little-endian u32 at p. */
static uint32_t u32_at(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Issue 33 item 7: GET /api/view: every placed entity's world position and every box, in
 * the binary form docs/inspector.md gives, all of them up to max (else every n-th, the
 * answer says which), and 304 when nothing moved (If-None-Match). Before, the page drew
 * the first 1,000 entities from 510 KB of JSON five times a second. */
static void Inspect_the_view_sends_every_position_and_box(void **state)
{
    fixture *f = *state;
    reply r;
    char head[1024], etag[64] = "";
    start(f, NULL);
    int s = connect_to(f);
    snprintf(head, sizeof head,
             "GET /api/view HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n"
             "Connection: close\r\n\r\n",
             f->port, f->token);
    send_all(s, head, strlen(head));
    char buf[65536];
    size_t got = 0;
    for (ssize_t k; got < sizeof buf && (k = recv(s, buf + got, sizeof buf - got, 0)) > 0;)
        got += (size_t)k;
    close(s);
    const char *body = memmem(buf, got, "\r\n\r\n", 4);
    assert_non_null(body);
    body += 4;
    const char *tag = memmem(buf, (size_t)(body - buf), "ETag: ", 6);
    assert_non_null(tag);
    sscanf(tag + 6, "%63[^\r]", etag);
    assert_int_equal(memcmp(body, "ECSV", 4), 0);
    uint32_t version = u32_at(body + 4), live = u32_at(body + 8), n = u32_at(body + 12),
             boxes = u32_at(body + 16), stride = u32_at(body + 20);
    assert_int_equal(version, 1);
    assert_int_equal(live, 39);
    assert_int_equal(stride, 1);
    assert_int_equal(got - (size_t)(body - buf), 24 + 16 * n + 28 * boxes);
    get(f, "/api/entities?query=transform&limit=0", &r);
    assert_int_equal(n, (int)number_at(r.json, "total")); /* every entity with a transform */
    reply_free(&r);
    get(f, "/api/entities?query=transform,mesh&limit=0", &r);
    assert_int_equal(boxes, (int)number_at(r.json, "total")); /* a box for each with a mesh */
    reply_free(&r);
    bool found = false; /* house1 at its world position: the street's (0, 0, 0) + (-18, 0, 14) */
    char id[32];
    id_of(f, "house1", id, sizeof id);
    for (uint32_t i = 0; i < n; i++) {
        const char *p = body + 24 + 16 * i;
        float xyz[3];
        memcpy(xyz, p + 4, 12);
        char text[32];
        snprintf(text, sizeof text, "%u.%u", u32_at(p) & 0x3FFFFF, u32_at(p) >> 22 & 0xFF);
        if (!strcmp(text, id)) found = xyz[0] == -18 && xyz[1] == 0 && xyz[2] == 14;
    }
    assert_true(found);
    get(f, "/api/view?max=10", &r); /* thinned: every 4th of 39 */
    expect_status(&r, 200, "view?max=10");
    reply_free(&r);
    get(f, "/api/view?max=0", &r);
    expect_status(&r, 400, "max=0");
    reply_free(&r);
    stop(f);
    harness_proc_discard(&f->proc);
    char *scene; /* a world that does not move (no spin): the same answer again is a 304 */
    start_big(f, 1000, "60", &scene);
    int status[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        s = connect_to(f);
        snprintf(head, sizeof head,
                 "GET /api/view HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer %s\r\n"
                 "%s%s%sConnection: close\r\n\r\n",
                 f->port, f->token, i ? "If-None-Match: " : "", i ? etag : "", i ? "\r\n" : "");
        send_all(s, head, strlen(head));
        got = 0;
        for (ssize_t k;
             got < sizeof buf - 1 && (k = recv(s, buf + got, sizeof buf - 1 - got, 0)) > 0;)
            got += (size_t)k;
        close(s);
        buf[got] = '\0';
        sscanf(buf, "HTTP/1.1 %d", &status[i]);
        if (!i && (tag = strstr(buf, "ETag: "))) sscanf(tag + 6, "%63[^\r]", etag);
    }
    assert_int_equal(status[0], 200);
    assert_int_equal(status[1], 304);
    assert_null(strstr(buf, "ECSV")); /* no bytes again */
    stop(f);
    free(scene);
}

/* Issue 33 item 16: a component added (PUT) and removed (DELETE, through the manager's
 * remove_component; 405 for a manager without one), an entity destroyed answering with
 * every entity its cascade took (the street: every house, door, handle, window, lamp...). */
static void Inspect_components_added_removed_and_cascades_listed(void **state)
{
    fixture *f = *state;
    reply r;
    char house[32], street[32], path[128];
    start(f, NULL);
    id_of(f, "house1", house, sizeof house);
    id_of(f, "street", street, sizeof street);
    snprintf(path, sizeof path, "/api/entities/%s/spin", house);
    request(f, "PUT", path, "{\"rate\": [0, 1, 0]}", NULL, NULL, &r); /* added */
    expect_status(&r, 200, "add spin");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r.json, "components"), "spin"));
    reply_free(&r);
    request(f, "DELETE", path, NULL, NULL, NULL, &r); /* spin offers no remove_component */
    expect_status(&r, 405, "remove spin");
    reply_free(&r);
    const char *removable[] = {"mesh", "debug_name"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/api/entities/%s/%s", house, removable[i]);
        request(f, "DELETE", path, NULL, NULL, NULL, &r);
        expect_status(&r, 200, removable[i]);
        assert_null(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(r.json, "components"), removable[i]));
        reply_free(&r);
    }
    snprintf(path, sizeof path, "/api/entities/%s/children?limit=1000", street);
    get(f, path, &r);
    int children = (int)number_at(r.json, "total");
    reply_free(&r);
    get(f, "/api/world", &r);
    int before = (int)number_at(r.json, "entities");
    reply_free(&r);
    snprintf(path, sizeof path, "/api/entities/%s", street);
    request(f, "DELETE", path, NULL, NULL, NULL, &r);
    expect_status(&r, 200, "destroy the street");
    int count = (int)number_at(r.json, "count");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(r.json, "destroyed");
    assert_int_equal(cJSON_GetArraySize(list), count);
    assert_string_equal(list->child->valuestring, street);
    assert_true(count > children + 1); /* grandchildren too */
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        reply g;
        snprintf(path, sizeof path, "/api/entities/%s", it->valuestring);
        get(f, path, &g);
        expect_status(&g, 404, "a destroyed one"); /* each listed is dead */
        reply_free(&g);
    }
    reply_free(&r);
    get(f, "/api/world", &r);
    assert_int_equal((int)number_at(r.json, "entities"), before - count); /* and no other */
    reply_free(&r);
    stop(f);
}

/* Issue 33 item 17: the world over time: a sample a second (entities, each manager's
 * components and memory, the frame intervals, the reloads) for the last minute, a sample a
 * minute for the last hour. */
static void Inspect_stats_sample_the_world_every_second(void **state)
{
    fixture *f = *state;
    reply r;
    start(f, NULL);
    const cJSON *minute = NULL;
    for (int i = 0; i < 100; i++) { /* 3 samples: 3 s of frames */
        get(f, "/api/stats", &r);
        expect_status(&r, 200, "stats");
        minute = cJSON_GetObjectItemCaseSensitive(r.json, "minute");
        if (cJSON_GetArraySize(minute) >= 3) break;
        reply_free(&r);
        struct timespec pause = {0, 100000000};
        nanosleep(&pause, NULL);
    }
    assert_true(cJSON_GetArraySize(minute) >= 3);
    double t = -1;
    const cJSON *s;
    cJSON_ArrayForEach(s, minute)
    {
        assert_true(number_at(s, "t") > t); /* oldest first */
        t = number_at(s, "t");
        assert_int_equal((int)number_at(s, "entities"), 39);
        assert_true(number_at(s, "frame_max_us") >= number_at(s, "frame_mean_us"));
        const cJSON *tf = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(s, "managers"), "transform");
        assert_true(number_at(tf, "components") > 30);
        assert_true(number_at(tf, "bytes") > 0);
    }
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "hour")), 0);
    reply_free(&r);
    stop(f);
}

#define TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        TEST(Inspect_world_plugins_and_schedule_describe_the_demo),
        TEST(Inspect_entities_come_in_pages_with_a_name_filter),
        TEST(Inspect_roots_children_and_paths_make_the_tree),
        TEST(Inspect_a_query_lists_its_matches),
        TEST(Inspect_the_view_sends_every_position_and_box),
        TEST(Inspect_stats_sample_the_world_every_second),
        TEST(Inspect_edit_is_checked_like_a_scene_and_reaches_the_save),
        TEST(Inspect_patch_changes_only_what_it_names_and_unknown_keys_are_refused),
        TEST(Inspect_a_failed_mesh_edit_leaves_the_meshes_as_they_were),
        TEST(Inspect_create_and_destroy_entities),
        TEST(Inspect_frame_controls_pause_step_restore_and_refuse_bad_calls),
        TEST(Inspect_a_kept_snapshot_survives_a_reload_that_changes_a_layout),
        TEST(Inspect_components_added_removed_and_cascades_listed),
        TEST(Inspect_token_host_size_and_read_only_are_enforced),
        TEST(Inspect_near_miss_tokens_and_hosts_are_refused),
        TEST(Inspect_slow_sockets_without_a_token_never_lock_it_out),
        TEST(Inspect_the_token_stays_out_of_the_log_and_is_in_a_private_file),
        TEST(Inspect_doubled_headers_nuls_and_host_names),
        TEST(Inspect_slow_and_vanishing_clients_never_stop_the_frames),
        TEST(Inspect_events_stream_the_log_and_the_frame),
        TEST(Inspect_crashes_rollbacks_unloads_and_parks_are_in_the_history),
        TEST(Inspect_edits_racing_reloads_of_their_manager_all_land),
        TEST(Inspect_a_save_goes_only_where_the_user_chose_at_start),
        TEST(Inspect_without_a_save_file_or_folder_nothing_is_saved),
        TEST(Inspect_a_bad_save_folder_is_refused_at_start),
        TEST(Inspect_downloads_the_world),
        TEST(Inspect_the_download_is_written_as_it_is_read),
        TEST(Inspect_bad_address_is_one_line_and_exit_1),
        TEST(Inspect_a_search_of_300000_entities_runs_between_frames),
        TEST(Inspect_a_search_whose_client_hung_up_is_dropped),
    };
    return cmocka_run_group_tests_name("inspect", tests, NULL, NULL);
}
