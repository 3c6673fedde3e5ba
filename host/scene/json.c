/* SPDX-License-Identifier: MIT */
/* json.c: JSON files into cJSON trees (by jparse.c), with file:line:col errors (json.h). */
#include "json.h"

#include "fs.h"
#include "jparse.h"
#include "log.h"
#include "thread.h"

#define HOST_JSON_MAX_BYTES                                                                        \
    ((size_t)8 << 30) /* 8 GiB: a scene file (4 M entities: ~1.1 GB), not a disk */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *host_json_type_name(const cJSON *v)
{
    if (!v) return "nothing";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

#define READ_SPLIT ((size_t)4 << 20) /* a larger file is read by two threads at once */

typedef struct half_read {
    int fd;
    char *buf;
    size_t from, to, got;
} half_read;

static void *read_half(void *arg)
{
    half_read *h = arg;
    while (h->from + h->got < h->to) {
        size_t at = h->from + h->got;
        ssize_t r = pread(h->fd, h->buf + at, h->to - at, (off_t)at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        h->got += (size_t)r;
    }
    return NULL;
}

/* The first `size` bytes of fd into buf, its second half by a second thread (the copy and
 * the page faults of a fresh buffer, on two CPUs): size when all were read, else 0 (then
 * the caller reads the file the plain way). */
static size_t read_halves(int fd, char *buf, size_t size)
{
    if (size < READ_SPLIT || sysconf(_SC_NPROCESSORS_ONLN) < 2) return 0;
    half_read a = {fd, buf, 0, size / 2, 0}, b = {fd, buf, size / 2, size, 0};
    pthread_t thread;
    if (!host_thread_start(&thread, read_half, &b, "ecs-scene-read")) return 0;
    read_half(&a);
    pthread_join(thread, NULL);
    return a.got + b.got == size ? size : 0;
}

/* The whole file in a NUL-terminated buffer; NULL with err set on failure. */
char *host_json_read_text(const char *path, size_t *len, char *err, size_t errlen)
{
    char why[128];
    int fd = host_fs_open_regular(path, why, sizeof why); /* a FIFO or a device never blocks */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    struct stat st;
    if (!f) {
        if (fd >= 0) close(fd);
        if (fd >= 0) snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        snprintf(err, errlen, "%s: %s", path,
                 strstr(why, "a folder") ? "is a directory, expected a JSON file" : why);
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = cap <= HOST_JSON_MAX_BYTES ? malloc(cap) : NULL;
    /* no huge pages here (host_mem_advise_huge): the read fills the buffer at once, and a
     * fresh process waited 0.26 s instead of 0.08 for 124 MB while the kernel gathered
     * them */
    if (buf && (n = read_halves(fileno(f), buf, cap - 1)) && fseeko(f, (off_t)n, SEEK_SET) != 0)
        n = 0; /* as if not read: the plain way from the start */
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1 || feof(f)) break;
        int c = fgetc(f); /* the buffer is full: at the end, or did the file grow? */
        if (c == EOF) break;
        ungetc(c, f);
        if (cap > HOST_JSON_MAX_BYTES / 2) { /* /dev/zero, or a file that keeps growing */
            snprintf(err, errlen, "%s: larger than %u MiB: not read", path,
                     (unsigned)(HOST_JSON_MAX_BYTES >> 20));
            free(buf);
            fclose(f);
            return NULL;
        }
        char *bigger = realloc(buf, cap * 2); /* the file grew while we read it */
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

cJSON *host_json_read_file(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = host_json_read_text(path, &len, err, errlen);
    if (!text) return NULL;
    cJSON *root = host_json_parse(path, text, len, err, errlen);
    free(text);
    return root;
}

/* err = "path:line:col: what" for a failed parse ("path: what" for an empty file). */
static void parse_error(const char *path, const char *text, size_t len, const host_jparse_error *e,
                        char *err, size_t errlen)
{
    char what[160];
    int line, col;
    host_jparse_describe(text, len, e, what, sizeof what);
    if (e->status == HOST_JPARSE_EMPTY) {
        host_format(err, errlen, "%s: %s", path, what);
        return;
    }
    host_jparse_position(text, text + e->offset, &line, &col);
    host_format(err, errlen, "%s:%d:%d: %s", path, line, col, what);
}

cJSON *host_json_parse(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
    host_jparse_error e;
    cJSON *root = host_jparse_keys(text, len, NULL, true, &e);
    if (!root) parse_error(path, text, len, &e, err, errlen);
    return root;
}

cJSON *host_json_parse_arena(const char *path, const char *text, size_t len,
                             host_json_arena **arena, char *err, size_t errlen)
{
    host_jparse_error e;
    cJSON *root = NULL;
    if (!(*arena = host_json_arena_new(len))) {
        host_format(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (!(root = host_jparse_keys(text, len, *arena, true, &e))) {
        parse_error(path, text, len, &e, err, errlen);
        host_json_arena_free(*arena);
        *arena = NULL;
    }
    return root;
}

/* ---- locating a node in the text it was parsed from ----
 * cJSON keeps no positions, and recording them for every node would slow every load for
 * the sake of the rare error. Instead, on an error, scan the text once more beside a
 * pre-order walk of the tree: values appear in the text in exactly that order. */

typedef struct locator {
    const char *p, *end;
    const cJSON *target;
    const char *found;
    char *path;
    size_t cap, used;
} locator;

static void skip_ws(locator *l) /* as cJSON: every byte up to ' ' is white space */
{
    while (l->p < l->end && (unsigned char)*l->p <= ' ') l->p++;
}

static void skip_string(locator *l)
{
    for (l->p++; l->p < l->end && *l->p != '"'; l->p++)
        if (*l->p == '\\') l->p++;
    l->p++;
}

static void path_add(locator *l, size_t at, const char *fmt, const char *key, int index)
{
    l->used = at;
    if (at >= l->cap) return;
    int n = key ? snprintf(l->path + at, l->cap - at, fmt, key)
                : snprintf(l->path + at, l->cap - at, fmt, index);
    if (n > 0) l->used = at + (size_t)n < l->cap ? at + (size_t)n : l->cap - 1;
}

/* Pass over the string (or other scalar) at l->p. */
static void skip_scalar(locator *l, bool string)
{
    if (string)
        skip_string(l);
    else
        while (l->p < l->end && !strchr(",]} \t\r\n", *l->p)) l->p++;
}

/* Cut the path back to `mark` bytes. */
static void path_back(locator *l, size_t mark)
{
    l->used = mark;
    if (l->cap) l->path[mark < l->cap ? mark : l->cap - 1] = '\0';
}

/* Walk value v, which starts at l->p. True once the target was found. */
static bool walk(locator *l, const cJSON *v)
{
    skip_ws(l);
    if (v == l->target) {
        l->found = l->p;
        return true;
    }
    size_t mark = l->used;
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        bool object = cJSON_IsObject(v);
        l->p++; /* { or [ */
        int i = 0;
        for (const cJSON *c = v->child; c; c = c->next, i++) {
            skip_ws(l);
            if (object) {
                skip_string(l);
                skip_ws(l);
                l->p++; /* : */
                path_add(l, mark, mark ? ".%s" : "%s", c->string ? c->string : "", 0);
            } else {
                path_add(l, mark, "[%d]", NULL, i);
            }
            if (walk(l, c)) return true;
            skip_ws(l);
            if (l->p < l->end && *l->p == ',') l->p++;
        }
        skip_ws(l);
        l->p++; /* } or ] */
    } else {
        skip_scalar(l, cJSON_IsString(v));
    }
    path_back(l, mark);
    return false;
}

bool host_json_locate(const char *text, size_t len, const cJSON *root, const cJSON *node, int *line,
                      int *col, char *path, size_t pathlen)
{
    locator l = {text, text + len, node, NULL, path, pathlen, 0};
    if (pathlen) path[0] = '\0';
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) l.p += 3; /* cJSON skips a BOM too */
    if (!walk(&l, root)) return false;
    host_jparse_position(text, l.found, line, col);
    return true;
}

const char *host_json_find(const char *text, size_t len, const cJSON *root, const cJSON *node)
{
    char path[1];
    locator l = {text, text + len, node, NULL, path, 0, 0};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) l.p += 3;
    return walk(&l, root) ? l.found : NULL;
}

/* ---- the JSON path of an offset, from the (valid) text alone ---- */

/* Walk the value at l->p; true once l->target (a value's or a key's first byte) is met.
 * The text need not be valid JSON (the loader checks some values only when it reads
 * them): every step moves on, and the loader's first pass bounded the nesting. */
static bool walk_text(locator *l, const char *target)
{
    skip_ws(l);
    if (l->p >= target) return true;
    size_t mark = l->used;
    char c = l->p < l->end ? *l->p : '\0';
    if (c == '{' || c == '[') {
        l->p++;
        for (int i = 0;; i++) {
            skip_ws(l);
            if (l->p >= l->end || *l->p == (c == '{' ? '}' : ']')) break;
            if (c == '{') {
                const char *key = l->p;
                skip_string(l);
                int n = (int)(l->p - key - 2);
                l->used = mark;
                if (mark < l->cap) {
                    int w = snprintf(l->path + mark, l->cap - mark, "%s%.*s", mark ? "." : "",
                                     n > 0 ? n : 0, key + 1);
                    if (w > 0) l->used = mark + (size_t)w < l->cap ? mark + (size_t)w : l->cap - 1;
                }
                if (key >= target) return true; /* the error is at this key */
                skip_ws(l);
                l->p++; /* : */
            } else {
                path_add(l, mark, "[%d]", NULL, i);
            }
            const char *before = l->p;
            if (walk_text(l, target)) return true;
            skip_ws(l);
            if (l->p < l->end && (*l->p == ',' || l->p == before))
                l->p++; /* past the comma, or past a byte that is no JSON: always on */
        }
        l->p++;
    } else {
        skip_scalar(l, c == '"');
    }
    path_back(l, mark);
    return false;
}

bool host_json_path_at(const char *text, size_t len, size_t offset, char *path, size_t size)
{
    locator l = {text, text + len, NULL, NULL, path, size, 0};
    if (size) path[0] = '\0';
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) l.p += 3;
    return offset <= len && walk_text(&l, text + offset);
}

/* The path of node under v ("entities[3].rl") appended to path at used; false when node
 * is not under v. */
static bool path_walk(const cJSON *v, const cJSON *node, char *path, size_t size, size_t used)
{
    if (v == node) return true;
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        int n = cJSON_IsObject(v) ? snprintf(path + used, size - used, "%s%s", used ? "." : "",
                                             c->string ? c->string : "")
                                  : snprintf(path + used, size - used, "[%d]", i);
        if (n < 0 || (size_t)n >= size - used) n = 0; /* cut: the path stays as it was */
        if (path_walk(c, node, path, size, used + (size_t)n)) return true;
        path[used] = '\0';
    }
    return false;
}

bool host_json_path_of(const cJSON *root, const cJSON *node, char *path, size_t size)
{
    if (size) path[0] = '\0';
    return root && node && size && path_walk(root, node, path, size, 0);
}

void host_json_error_at(char *out, size_t outlen, const char *file, const char *text, size_t len,
                        const cJSON *root, const cJSON *at, bool lines, const char *message)
{
    char where[256] = "";
    int line = 0, col = 0;
    bool found = at && root && text &&
                 host_json_locate(text, len, root, at, &line, &col, where, sizeof where);
    if (!text && host_json_path_of(root, at, where, sizeof where) && *where) { /* a tree only */
        host_format(out, outlen, "%s: %s: %s", file, where, message);
        return;
    }
    if (found && lines)
        host_format(out, outlen, "%s:%d:%d: %s%s%s", file, line, col, where, *where ? ": " : "",
                    message);
    else if (found && *where)
        host_format(out, outlen, "%s: %s: %s", file, where, message);
    else
        host_format(out, outlen, "%s: %s", file, message);
}
