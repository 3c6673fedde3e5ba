/* SPDX-License-Identifier: MIT */
/* gltf.c: glTF 2.0 import (gltf.h): a .gltf or .glb file -> a scene cJSON tree.
 *
 * Steps, each refusing a bad file with one message: the container (a .glb's header and
 * chunk lengths against the size; its JSON chunk) -> JSON parse (json.c: file:line:col)
 * -> "asset" and the top-level arrays (each one indexed: item[i], so an index is O(1))
 * -> the node tree: parent[i] from every node's "children" -> no node its own ancestor
 * -> the chosen scene's roots -> a pre-order walk from them (an explicit stack: a deep
 * tree cannot overflow the C stack) making one entity per node, parents before children,
 * so each "parent" reference resolves to an entity the scene loader has already loaded.
 *
 * Invariant of the walk: parent[] is a forest (each node at most one parent, no cycle)
 * and every root has no parent, so each node is pushed, and emitted, at most once.
 */
#include "gltf.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "log.h"

#define NAME_MAX_BYTES 255         /* debug_name, mesh and material names: 1..255 bytes */
#define SUFFIX_MAX     32          /* "#mesh<int>/prim<int>" fits, with its NUL */
#define GLB_MAGIC      "glTF"      /* a .glb's first 4 bytes */
#define GLB_JSON       0x4E4F534Au /* chunk type "JSON" */
#define GLB_BIN        0x004E4942u /* chunk type "BIN\0" */
#define UNIT_TOLERANCE 1e-5        /* |length - 1| of a rotation, cosine of a matrix's shear */

/* glTF's accessor component types (the ones a POSITION may have) */
enum {
    GL_BYTE = 5120,
    GL_UNSIGNED_BYTE = 5121,
    GL_SHORT = 5122,
    GL_UNSIGNED_SHORT = 5123,
    GL_FLOAT = 5126
};

/* One of the file's buffers, read the first time vertex data needs it. */
typedef struct gltf_buffer {
    const unsigned char *data;
    size_t len;
    unsigned char *owned; /* decoded or read here, freed at the end */
    bool loaded;
} gltf_buffer;

/* One top-level array of the file, indexed. */
typedef struct gltf_list {
    const cJSON **item;
    int count;
    const char *key, *one; /* "meshes", "mesh": for messages */
} gltf_list;

typedef struct gltf {
    const char *name; /* the file, in every message */
    char *text;       /* the JSON text (NUL-terminated copy), for error positions */
    size_t len;
    bool binary;
    cJSON *root;
    gltf_list nodes, meshes, accessors, materials, scenes, buffers, views;
    gltf_buffer *bufs;        /* by buffer index */
    const unsigned char *bin; /* a .glb's BIN chunk, or NULL */
    size_t bin_len;
    const char *dir; /* the file's folder for external buffers; NULL: none */
    int *parent;     /* by node: its parent, -1 for none */
    char base[NAME_MAX_BYTES + 1 - SUFFIX_MAX + 1]; /* the cleaned basename, for resources */
    char *err;
    size_t errlen;
    bool failed;
} gltf;

typedef struct trs {
    double p[3], q[4], s[3];
} trs;

/* ---- messages ---- */

/* Record the first error, located at value `at` (NULL: the file as a whole). */
static void fail(gltf *g, const cJSON *at, const char *fmt, ...) ECS_PRINTF(3, 4);
static void fail(gltf *g, const cJSON *at, const char *fmt, ...)
{
    if (g->failed) return;
    g->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    host_json_error_at(g->err, g->errlen, g->name, g->text, g->len, g->root, at, !g->binary, msg);
}

static bool out_of_memory(gltf *g)
{
    fail(g, NULL, "out of memory");
    return false;
}

/* What v is, for "found ...": a type, or an array's length. */
static const char *found(const cJSON *v, char *buf, size_t size)
{
    if (!cJSON_IsArray(v)) return host_json_type_name(v);
    int n = cJSON_GetArraySize(v);
    snprintf(buf, size, "an array of %d value%s", n, n == 1 ? "" : "s");
    return buf;
}

/* ---- names: UTF-8 without control characters, 1..255 bytes ---- */

/* Length of the valid UTF-8 sequence at p (its code point in *cp), 0 when invalid:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
{
    static const uint32_t first_bits[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n = p[0] < 0x80   ? 1
               : p[0] < 0xC2 ? 0
               : p[0] < 0xE0 ? 2
               : p[0] < 0xF0 ? 3
               : p[0] < 0xF5 ? 4
                             : 0;
    if (!n) return 0;
    uint32_t v = p[0] & first_bits[n];
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0u) != 0x80u) return 0; /* also stops at the terminating NUL */
        v = (v << 6) | (p[k] & 0x3Fu);
    }
    if (v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

enum { CLEAN_REPLACED = 1, CLEAN_CUT = 2 }; /* what clean_name changed */

/* Copy in to out (cap bytes with the NUL) as a valid name: each control character and
 * each byte that is not valid UTF-8 becomes '_' (CLEAN_REPLACED), and the copy stops
 * before a character that would not fit (CLEAN_CUT). Returns those flags, 0 when out is
 * in unchanged. */
static int clean_name(const char *in, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t used = 0;
    int changed = 0;
    while (*p) {
        uint32_t cp = 0;
        size_t n = utf8_decode(p, &cp);
        bool bad = !n || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
        size_t put = bad ? 1 : n;
        if (used + put >= cap) {
            changed |= CLEAN_CUT;
            break;
        }
        if (bad)
            out[used] = '_';
        else
            memcpy(out + used, p, n);
        used += put;
        changed |= bad ? CLEAN_REPLACED : 0;
        p += n ? n : 1;
    }
    out[used] = '\0';
    return changed;
}

/* The name in (the string at list[index].name) cleaned into out (NAME_MAX_BYTES + 1
 * bytes), with a warning saying what was changed. */
static void clean_warn(gltf *g, const char *in, char *out, const char *list, int index)
{
    int changed = clean_name(in, out, NAME_MAX_BYTES + 1);
    if (changed)
        host_warn("gltf", "%s: %s[%d].name: %s%s%s: \"%s\"", g->name, list, index,
                  changed & CLEAN_REPLACED ? "control characters or invalid UTF-8 became '_'" : "",
                  changed == (CLEAN_REPLACED | CLEAN_CUT) ? ", and " : "",
                  changed & CLEAN_CUT ? "cut to 255 bytes (a name's limit)" : "", out);
}

/* ---- JSON access with type checks ---- */

/* obj[key] when it is absent (NULL) or passes `is`; otherwise an error (NULL too: the
 * caller tests g->failed) saying it should be `want`. */
static const cJSON *member(gltf *g, const cJSON *obj, const char *key,
                           cJSON_bool (*is)(const cJSON *), const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || is(v)) return v;
    char buf[48];
    fail(g, v, "expected %s, found %s", want, found(v, buf, sizeof buf));
    return NULL;
}

/* v as an index into list l, in *out. False (an error saying which) when it is not a
 * whole number >= 0 or is out of range. */
static bool index_in(gltf *g, const cJSON *v, const gltf_list *l, int *out)
{
    char buf[48];
    if (!cJSON_IsNumber(v))
        return fail(g, v, "expected a %s index (a whole number >= 0), found %s", l->one,
                    found(v, buf, sizeof buf)),
               false;
    if (!(v->valuedouble >= 0) || v->valuedouble != floor(v->valuedouble))
        return fail(g, v, "expected a %s index (a whole number >= 0), found %g", l->one,
                    v->valuedouble),
               false;
    if (v->valuedouble >= l->count)
        return fail(g, v, "%s index %.15g is out of range: \"%s\" has %d entr%s", l->one,
                    v->valuedouble, l->key, l->count, l->count == 1 ? "y" : "ies"),
               false;
    *out = (int)v->valuedouble;
    return true;
}

/* a as exactly n numbers that are finite floats, into out. False with an error
 * otherwise. */
static bool numbers(gltf *g, const cJSON *a, int n, double *out)
{
    char buf[48];
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return fail(g, a, "expected an array of %d numbers, found %s", n,
                    found(a, buf, sizeof buf)),
               false;
    int k = 0;
    for (const cJSON *x = a->child; x; x = x->next, k++) {
        if (!cJSON_IsNumber(x))
            return fail(g, x, "expected a number, found %s", host_json_type_name(x)), false;
        if (!(fabs(x->valuedouble) <= FLT_MAX)) /* inf, or beyond the float range */
            return fail(g, x, "%g is not a finite number (float range)", x->valuedouble), false;
        out[k] = x->valuedouble;
    }
    return true;
}

/* root[key] as a list of objects into *l (absent: empty). False with an error when it
 * is not an array of objects. */
static bool read_list(gltf *g, const char *key, const char *one, gltf_list *l)
{
    l->key = key;
    l->one = one;
    const cJSON *a = member(g, g->root, key, cJSON_IsArray, "an array of objects");
    if (g->failed) return false;
    int n = cJSON_GetArraySize(a); /* 0 for NULL */
    if (!(l->item = calloc((size_t)n + 1, sizeof *l->item))) return out_of_memory(g);
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        if (!cJSON_IsObject(x))
            return fail(g, x, "expected an object, found %s", host_json_type_name(x)), false;
        l->item[l->count++] = x;
    }
    return true;
}

/* ---- the container and the JSON ---- */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Every chunk after the JSON one (from `at`) lies inside the file. */
static bool glb_chunks_fit(gltf *g, const unsigned char *data, size_t size, size_t at)
{
    for (int k = 1; at < size; k++) {
        if (size - at < 8)
            return fail(g, NULL, "%zu stray bytes after chunk %d (a chunk header is 8 bytes)",
                        size - at, k - 1),
                   false;
        uint32_t n = le32(data + at);
        if (n > size - at - 8)
            return fail(g, NULL, "chunk %d is %u bytes long but only %zu bytes follow its header",
                        k, n, size - at - 8),
                   false;
        if (k == 1 && le32(data + at + 4) == GLB_BIN) { /* buffer 0 without a uri */
            g->bin = data + at + 8;
            g->bin_len = n;
        }
        at += 8 + (size_t)n;
    }
    return true;
}

/* The JSON chunk of a .glb into *json, *len: the 12-byte header (magic, version 2,
 * length equal to the file's size) and every chunk's length checked. */
static bool glb_json(gltf *g, const unsigned char *data, size_t size, const unsigned char **json,
                     size_t *len)
{
    if (size < 12)
        return fail(g, NULL, "%zu bytes: too short for the 12-byte .glb header", size), false;
    if (memcmp(data, GLB_MAGIC, 4) != 0)
        return fail(g, NULL, "not a .glb file: it does not start with the magic \"glTF\""), false;
    uint32_t version = le32(data + 4), length = le32(data + 8);
    if (version != 2)
        return fail(g, NULL, ".glb container version %u is not supported (expected 2)", version),
               false;
    if (length != size)
        return fail(g, NULL, "the .glb header gives a length of %u bytes but the file has %zu",
                    length, size),
               false;
    if (size < 20)
        return fail(g, NULL, "no JSON chunk: the file ends after its 12-byte header"), false;
    uint32_t n = le32(data + 12), type = le32(data + 16);
    if (type != GLB_JSON)
        return fail(g, NULL, "chunk 0 must be JSON (type 0x%08X), found type 0x%08X", GLB_JSON,
                    type),
               false;
    if (n > size - 20)
        return fail(g, NULL, "the JSON chunk is %u bytes long but only %zu bytes follow its header",
                    n, size - 20),
               false;
    *json = data + 20;
    *len = n;
    return glb_chunks_fit(g, data, size, 20 + (size_t)n);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The JSON of the file (the whole .gltf, or a .glb's JSON chunk), copied and parsed into
 * g->text and g->root. */
static bool read_json(gltf *g, const unsigned char *data, size_t size)
{
    const unsigned char *json = data;
    size_t len = size;
    g->binary = (size >= 4 && memcmp(data, GLB_MAGIC, 4) == 0) || ends_with(g->name, ".glb");
    if (g->binary && !glb_json(g, data, size, &json, &len)) return false;
    size_t nuls = 0;
    while (g->binary && nuls < len && json[len - 1 - nuls] == '\0') nuls++;
    if (nuls)
        return fail(g, NULL,
                    "the JSON chunk ends in %zu NUL byte%s of padding: glTF pads it with spaces "
                    "(0x20)",
                    nuls, nuls == 1 ? "" : "s"),
               false;
    if (!(g->text = malloc(len + 1))) return out_of_memory(g);
    if (len) memcpy(g->text, json, len);
    g->text[len] = '\0';
    g->len = len;
    size_t nlen = strlen(g->name) + sizeof " (JSON chunk)";
    char *label = malloc(nlen); /* where a syntax error's line:col counts from */
    if (!label) return out_of_memory(g);
    snprintf(label, nlen, "%s%s", g->name, g->binary ? " (JSON chunk)" : "");
    g->root = host_json_parse(label, g->text, len, g->err, g->errlen);
    free(label);
    return g->root ? true : (g->failed = true, false);
}

/* Extensions a file may require: what the import implements (KHR_mesh_quantization), and
 * what changes nothing it reads (materials, textures, lights; compressed vertex data, whose
 * bounds the accessors' min/max still give). */
static const char *const known_extensions[] = {
    "KHR_mesh_quantization",   "KHR_draco_mesh_compression",
    "EXT_meshopt_compression", "KHR_texture_transform",
    "KHR_texture_basisu",      "EXT_texture_webp",
    "KHR_lights_punctual",     "KHR_techniques_webgl",
    "KHR_materials_", /* every KHR_materials_* */
    "KHR_xmp_json_ld",         NULL};

static bool extension_known(const char *name)
{
    for (const char *const *k = known_extensions; *k; k++) {
        size_t n = strlen(*k);
        if ((*k)[n - 1] == '_' ? strncmp(name, *k, n) == 0 : strcmp(name, *k) == 0) return true;
    }
    return false;
}

/* "extensionsRequired": every name one the import implements or may ignore. */
static bool check_required(gltf *g)
{
    const cJSON *req = member(g, g->root, "extensionsRequired", cJSON_IsArray,
                              "an array of extension names"),
                *x;
    cJSON_ArrayForEach(x, req)
    {
        char name[64];
        if (!cJSON_IsString(x))
            return fail(g, x, "expected an extension name, found %s", host_json_type_name(x)),
                   false;
        if (!extension_known(x->valuestring)) {
            clean_name(x->valuestring, name, sizeof name);
            return fail(g, x,
                        "the file requires extension \"%s\", which this import does not "
                        "implement",
                        name),
                   false;
        }
    }
    return !g->failed;
}

/* The top level: an object with "asset": {"version": "2.x"}, and its arrays indexed. */
static bool read_top(gltf *g)
{
    char buf[48];
    if (!cJSON_IsObject(g->root))
        return fail(g, g->root, "expected a glTF object {\"asset\": ..., \"nodes\": ...}, found %s",
                    host_json_type_name(g->root)),
               false;
    const cJSON *asset = member(g, g->root, "asset", cJSON_IsObject, "an object");
    const cJSON *version = member(g, asset, "version", cJSON_IsString, "a string (\"2.0\")");
    if (g->failed) return false;
    if (!version)
        return fail(g, asset ? asset : g->root,
                    "no \"asset\": {\"version\": \"2.0\"}: not a glTF 2.0 file"),
               false;
    if (strncmp(version->valuestring, "2.", 2) != 0) {
        clean_name(version->valuestring, buf, 16);
        return fail(g, version, "glTF version \"%s\" is not supported (this reads 2.x)", buf),
               false;
    }
    return check_required(g) && read_list(g, "nodes", "node", &g->nodes) &&
           read_list(g, "meshes", "mesh", &g->meshes) &&
           read_list(g, "accessors", "accessor", &g->accessors) &&
           read_list(g, "materials", "material", &g->materials) &&
           read_list(g, "scenes", "scene", &g->scenes) &&
           read_list(g, "buffers", "buffer", &g->buffers) &&
           read_list(g, "bufferViews", "bufferView", &g->views) &&
           ((g->bufs = calloc((size_t)g->buffers.count + 1, sizeof *g->bufs)) || out_of_memory(g));
}

/* ---- the node tree ---- */

/* parent[] from every node's "children": each child in range, not the node itself, under
 * one parent only. */
static bool link_children(gltf *g)
{
    if (!(g->parent = malloc(((size_t)g->nodes.count + 1) * sizeof *g->parent)))
        return out_of_memory(g);
    for (int i = 0; i < g->nodes.count; i++) g->parent[i] = -1;
    for (int i = 0; i < g->nodes.count; i++) {
        const cJSON *kids = member(g, g->nodes.item[i], "children", cJSON_IsArray,
                                   "an array of node indices"),
                    *k;
        cJSON_ArrayForEach(k, kids)
        {
            int c;
            if (!index_in(g, k, &g->nodes, &c)) return false;
            if (c == i)
                return fail(g, k, "node %d is its own ancestor: it lists itself as a child", i),
                       false;
            if (g->parent[c] == i)
                return fail(g, k, "node %d appears twice among node %d's children", c, i), false;
            if (g->parent[c] >= 0)
                return fail(g, k, "node %d appears under two parents: node %d and node %d", c,
                            g->parent[c], i),
                       false;
            g->parent[c] = i;
        }
        if (g->failed) return false;
    }
    return true;
}

/* An error for the loop of parents through node j: "0 <- 1 <- 0" (a long one cut with
 * "..."). Returns false. */
static bool fail_loop(gltf *g, int j)
{
    char chain[192]; /* 11 + 9 x 15 bytes at most */
    int used = snprintf(chain, sizeof chain, "%d", j), k = g->parent[j];
    for (int n = 0; n < 8 && k != j; n++, k = g->parent[k])
        used += snprintf(chain + used, sizeof chain - (size_t)used, " <- %d", k);
    if (k == j)
        snprintf(chain + used, sizeof chain - (size_t)used, " <- %d", j);
    else
        snprintf(chain + used, sizeof chain - (size_t)used, " <- ...");
    fail(g, g->nodes.item[j], "node %d is its own ancestor (child <- parent: %s)", j, chain);
    return false;
}

/* No node is its own ancestor. Each node's chain of parents is followed until a node
 * already known to reach a root: O(nodes) in all. */
static bool check_acyclic(gltf *g)
{
    unsigned char *state = calloc((size_t)g->nodes.count + 1, 1); /* 1 on this chain, 2 ok */
    if (!state) return out_of_memory(g);
    for (int i = 0; i < g->nodes.count && !g->failed; i++) {
        int j = i;
        while (j >= 0 && state[j] == 0) {
            state[j] = 1;
            j = g->parent[j];
        }
        if (j >= 0 && state[j] == 1) fail_loop(g, j); /* the chain came back onto itself */
        for (int k = i; k >= 0 && state[k] == 1; k = g->parent[k]) state[k] = 2;
    }
    free(state);
    return !g->failed;
}

/* The roots of scene s (its "nodes": distinct, none a child) into roots and *n. */
static bool scene_roots(gltf *g, int s, int *roots, int *n)
{
    const cJSON *list =
        member(g, g->scenes.item[s], "nodes", cJSON_IsArray, "an array of node indices");
    const cJSON *x;
    bool *listed = calloc((size_t)g->nodes.count + 1, sizeof *listed);
    if (!listed) return out_of_memory(g);
    cJSON_ArrayForEach(x, list)
    {
        int r;
        if (!index_in(g, x, &g->nodes, &r)) break;
        if (g->parent[r] >= 0) {
            fail(g, x, "node %d is a root of scene %d but also a child of node %d", r, s,
                 g->parent[r]);
            break;
        }
        if (listed[r]) {
            fail(g, x, "node %d is listed twice in scene %d", r, s);
            break;
        }
        listed[r] = true;
        roots[(*n)++] = r; /* distinct: at most nodes.count of them */
    }
    free(listed);
    return !g->failed;
}

/* The nodes to import from: the roots of the default scene, else of scene 0, else (no
 * scenes) every node without a parent. Into *roots (malloc'd) and *n. */
static bool pick_roots(gltf *g, int **roots, int *n)
{
    const cJSON *pick = cJSON_GetObjectItemCaseSensitive(g->root, "scene");
    int s = 0;
    *n = 0;
    if (!(*roots = malloc(((size_t)g->nodes.count + 1) * sizeof **roots))) return out_of_memory(g);
    if (pick && !index_in(g, pick, &g->scenes, &s)) return false;
    if (g->scenes.count) return scene_roots(g, s, *roots, n);
    for (int i = 0; i < g->nodes.count; i++)
        if (g->parent[i] < 0) (*roots)[(*n)++] = i;
    return true;
}

/* ---- building entities ---- */

/* obj[key] = v, or an out-of-memory error (v is freed then). */
static bool add(gltf *g, cJSON *obj, const char *key, cJSON *v)
{
    if (v && cJSON_AddItemToObject(obj, key, v)) return true;
    cJSON_Delete(v);
    return out_of_memory(g);
}

/* The node's name as "debug_name", cleaned; nothing when it has none or it is empty. */
static bool add_name(gltf *g, cJSON *e, int i)
{
    const cJSON *name = member(g, g->nodes.item[i], "name", cJSON_IsString, "a string");
    char clean[NAME_MAX_BYTES + 1];
    if (!name) return !g->failed;
    clean_warn(g, name->valuestring, clean, "nodes", i);
    return !clean[0] || add(g, e, "debug_name", cJSON_CreateString(clean));
}

/* v / |v| into out when |v| > tol; false (out untouched) otherwise. */
static bool unit3(const double *v, double tol, double *out)
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(n > tol)) return false;
    for (int k = 0; k < 3; k++) out[k] = v[k] / n;
    return true;
}

static void cross3(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* A unit vector perpendicular to the unit vector v: v crossed with the axis it is least
 * along (one of its components is at most 1/sqrt(3) < 0.6, so the product is >= 0.8). */
static void perpendicular(const double *v, double *out)
{
    double axis[3] = {0, 0, 0}, t[3];
    axis[fabs(v[0]) < 0.6 ? 0 : fabs(v[1]) < 0.6 ? 1 : 2] = 1;
    cross3(v, axis, t);
    unit3(t, 0, out);
}

/* The orthonormal right-handed axes x, y, z of the rotation whose (unit or zero) column
 * directions are u[0..2]: Gram-Schmidt from x, with fallbacks so that zero or parallel
 * columns still give a rotation (a zero x from the other two's cross product; a y
 * parallel to x from z). */
static void rotation_axes(double u[3][3], double *x, double *y, double *z)
{
    const double tiny = 1e-6; /* below this the direction is noise */
    double t[3];
    cross3(u[1], u[2], t);
    if (!unit3(u[0], tiny, x) && !unit3(t, tiny, x)) {
        if (unit3(u[1], tiny, t) || unit3(u[2], tiny, t))
            perpendicular(t, x);
        else
            x[0] = 1, x[1] = x[2] = 0;
    }
    double d = u[1][0] * x[0] + u[1][1] * x[1] + u[1][2] * x[2];
    for (int k = 0; k < 3; k++) t[k] = u[1][k] - d * x[k];
    if (!unit3(t, tiny, y)) {
        cross3(u[2], x, t);
        if (!unit3(t, tiny, y)) perpendicular(x, y);
    }
    cross3(x, y, z);
}

/* The unit quaternion [x, y, z, w] (w >= 0) of the rotation with orthonormal axes x, y,
 * z (the matrix's columns). Shepperd's method: the largest of |w|, |x|, |y|, |z| comes
 * from the diagonal, the others from sums of off-diagonal terms divided by it, so no
 * small number is square-rooted or divided by. */
static void quat_from_axes(const double *x, const double *y, const double *z, double *q)
{
    double m00 = x[0], m11 = y[1], m22 = z[2], tr = m00 + m11 + m22, s;
    if (tr >= m00 && tr >= m11 && tr >= m22) {
        s = 2 * sqrt(1 + tr); /* 4w */
        q[3] = s / 4, q[0] = (y[2] - z[1]) / s, q[1] = (z[0] - x[2]) / s, q[2] = (x[1] - y[0]) / s;
    } else if (m00 >= m11 && m00 >= m22) {
        s = 2 * sqrt(1 + m00 - m11 - m22); /* 4x */
        q[3] = (y[2] - z[1]) / s, q[0] = s / 4, q[1] = (y[0] + x[1]) / s, q[2] = (z[0] + x[2]) / s;
    } else if (m11 >= m22) {
        s = 2 * sqrt(1 + m11 - m00 - m22); /* 4y */
        q[3] = (z[0] - x[2]) / s, q[0] = (y[0] + x[1]) / s, q[1] = s / 4, q[2] = (z[1] + y[2]) / s;
    } else {
        s = 2 * sqrt(1 + m22 - m00 - m11); /* 4z */
        q[3] = (x[1] - y[0]) / s, q[0] = (z[0] + x[2]) / s, q[1] = (z[1] + y[2]) / s, q[2] = s / 4;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (q[3] < 0) n = -n; /* one of the two signs, always the same */
    for (int k = 0; k < 4; k++) q[k] /= n;
}

/* The column-major matrix m (16 finite numbers) split into *t. */
static void decompose(const double *m, trs *t)
{
    double u[3][3], x[3], y[3], z[3], c12[3];
    for (int c = 0; c < 3; c++) {
        t->p[c] = m[12 + c];
        t->s[c] =
            sqrt(m[c * 4] * m[c * 4] + m[c * 4 + 1] * m[c * 4 + 1] + m[c * 4 + 2] * m[c * 4 + 2]);
        for (int r = 0; r < 3; r++) u[c][r] = t->s[c] > 0 ? m[c * 4 + r] / t->s[c] : 0;
    }
    cross3(u[1], u[2], c12);
    if (u[0][0] * c12[0] + u[0][1] * c12[1] + u[0][2] * c12[2] < 0) { /* a mirror: flip x */
        t->s[0] = -t->s[0];
        for (int r = 0; r < 3; r++) u[0][r] = -u[0][r];
    }
    rotation_axes(u, x, y, z);
    quat_from_axes(x, y, z, t->q);
}

/* The node's translation / rotation / scale (defaults: the identity) into *t; a rotation
 * that is not a unit quaternion is normalized with a warning naming node i. */
static bool read_trs(gltf *g, int i, const cJSON *node, trs *t)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(node, "translation");
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(node, "rotation");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(node, "scale");
    if ((p && !numbers(g, p, 3, t->p)) || (q && !numbers(g, q, 4, t->q)) ||
        (s && !numbers(g, s, 3, t->s)))
        return false;
    double big = fmax(fmax(fabs(t->q[0]), fabs(t->q[1])), fmax(fabs(t->q[2]), fabs(t->q[3])));
    if (!(big > 0)) /* scaled by the largest first: no overflow or underflow below */
        return fail(g, q, "the rotation is zero: expected a unit quaternion [x, y, z, w]"), false;
    double n = 0;
    for (int k = 0; k < 4; k++) n += (t->q[k] / big) * (t->q[k] / big);
    double length = big * sqrt(n);
    if (fabs(length - 1) > UNIT_TOLERANCE)
        host_warn("gltf",
                  "%s: nodes[%d].rotation is not a unit quaternion (length %.9g): "
                  "normalized",
                  g->name, i, length);
    for (int k = 0; k < 4; k++) t->q[k] = t->q[k] / big / sqrt(n);
    return true;
}

/* Does the column-major matrix m have shear (columns 0..2 not at right angles) or a last
 * row other than 0 0 0 1? Its TRS then differs from it. */
static bool not_trs(const double *m, double *worst)
{
    *worst = fmax(fmax(fabs(m[3]), fabs(m[7])), fmax(fabs(m[11]), fabs(m[15] - 1)));
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++) {
            double dot = 0, la = 0, lb = 0;
            for (int r = 0; r < 3; r++) {
                dot += m[a * 4 + r] * m[b * 4 + r];
                la += m[a * 4 + r] * m[a * 4 + r];
                lb += m[b * 4 + r] * m[b * 4 + r];
            }
            if (la > 0 && lb > 0) *worst = fmax(*worst, fabs(dot) / sqrt(la * lb));
        }
    return *worst > UNIT_TOLERANCE;
}

/* The node's local transform into *t: from "matrix", or from TRS. */
static bool read_local(gltf *g, int i, trs *t)
{
    const cJSON *node = g->nodes.item[i], *m = cJSON_GetObjectItemCaseSensitive(node, "matrix");
    *t = (trs){{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}};
    if (!m) return read_trs(g, i, node, t);
    if (cJSON_GetObjectItemCaseSensitive(node, "translation") ||
        cJSON_GetObjectItemCaseSensitive(node, "rotation") ||
        cJSON_GetObjectItemCaseSensitive(node, "scale"))
        return fail(g, m,
                    "node %d has both \"matrix\" and translation/rotation/scale (glTF allows "
                    "one or the other)",
                    i),
               false;
    double v[16], worst;
    if (!numbers(g, m, 16, v)) return false;
    if (not_trs(v, &worst))
        host_warn("gltf",
                  "%s: nodes[%d].matrix is not translation x rotation x scale (shear or "
                  "a last row other than 0 0 0 1, up to %.3g): its TRS part is imported",
                  g->name, i, worst);
    decompose(v, t);
    for (int k = 0; k < 3; k++)
        if (!(fabs(t->s[k]) <= FLT_MAX)) /* a column of three huge numbers */
            return fail(g, m, "the matrix's scale on axis %c is beyond the float range", "xyz"[k]),
                   false;
    return true;
}

/* The node's "transform": its local, and "parent" for a child. */
static bool add_transform(gltf *g, cJSON *e, int i)
{
    trs t;
    char parent[24];
    if (!read_local(g, i, &t)) return false;
    cJSON *o = cJSON_CreateObject();
    if (!add(g, e, "transform", o)) return false;
    if (!add(g, o, "position", cJSON_CreateDoubleArray(t.p, 3)) ||
        !add(g, o, "rotation", cJSON_CreateDoubleArray(t.q, 4)) ||
        !add(g, o, "scale", cJSON_CreateDoubleArray(t.s, 3)))
        return false;
    if (g->parent[i] < 0) return true;
    snprintf(parent, sizeof parent, "node%d", g->parent[i]);
    return add(g, o, "parent", cJSON_CreateString(parent));
}

/* ---- vertex data: buffers, views, accessors ---- */

/* The value of base64 digit c, or -1. */
static int b64(unsigned char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

/* Decode the base64 text in[0..n) (padding optional) into a new buffer. */
static bool base64_decode(gltf *g, const cJSON *at, const char *in, size_t n, gltf_buffer *b)
{
    while (n && in[n - 1] == '=') n--;
    if (!(b->owned = malloc(n / 4 * 3 + 3))) return out_of_memory(g);
    uint32_t acc = 0;
    size_t bits = 0, len = 0;
    for (size_t k = 0; k < n; k++) {
        int v = b64((unsigned char)in[k]);
        if (v < 0)
            return fail(g, at, "the data: URI holds a character that is not base64 at %zu", k),
                   false;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b->owned[len++] = (unsigned char)(acc >> bits);
        }
    }
    b->data = b->owned;
    b->len = len;
    return true;
}

/* uri as a path inside the file's folder: %XX decoded; no scheme, no absolute path, no
 * ".." segment, no backslash. False with an error otherwise. */
static bool local_path(gltf *g, const cJSON *at, const char *uri, char *out, size_t size)
{
    size_t n = 0;
    const char *colon = strchr(uri, ':'), *slash = strchr(uri, '/');
    if (!g->dir)
        return fail(g, at, "an external buffer file is read only when importing a file"), false;
    if (uri[0] == '/' || strchr(uri, '\\') || (colon && (!slash || colon < slash)))
        return fail(g, at, "buffer uri: only a relative path inside the file's folder is read"),
               false;
    for (const char *p = uri; *p; p++) {
        unsigned hi, lo;
        char c = *p;
        if (c == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) c = (char)(hi * 16 + lo), p += 2;
        if (c == '\0' || n + 1 >= size) return fail(g, at, "buffer uri: a bad path"), false;
        out[n++] = c;
    }
    out[n] = '\0';
    for (const char *seg = out; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL)
        if (strncmp(seg, "..", 2) == 0 && (seg[2] == '/' || seg[2] == '\0'))
            return fail(g, at, "buffer uri: \"..\" leaves the file's folder: not read"), false;
    return true;
}

/* Read the file dir/rel into b. */
static bool read_buffer_file(gltf *g, const cJSON *at, const char *rel, gltf_buffer *b)
{
    char path[4096], why[512];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", g->dir, rel) >= sizeof path)
        return fail(g, at, "buffer uri: the path is too long"), false;
    size_t len = 0;
    char *bytes = host_json_read_text(path, &len, why, sizeof why);
    if (!bytes) return fail(g, at, "cannot read the buffer: %s", why), false;
    b->owned = (unsigned char *)bytes;
    b->data = b->owned;
    b->len = len;
    return true;
}

/* The bytes of buffer k (loaded once): a .glb's BIN chunk (no uri), a data: URI, or a
 * file next to the glTF. Checked against its byteLength. */
static const gltf_buffer *buffer_at(gltf *g, int k)
{
    gltf_buffer *b = &g->bufs[k];
    if (b->loaded) return b;
    const cJSON *buf = g->buffers.item[k];
    const cJSON *uri = member(g, buf, "uri", cJSON_IsString, "a string");
    const cJSON *bl = member(g, buf, "byteLength", cJSON_IsNumber, "a number");
    if (g->failed) return NULL;
    if (!uri) {
        if (k != 0 || !g->bin)
            return fail(g, buf, "buffer %d has no uri and is not a .glb's BIN chunk", k), NULL;
        b->data = g->bin;
        b->len = g->bin_len;
    } else if (strncmp(uri->valuestring, "data:", 5) == 0) {
        const char *comma = strstr(uri->valuestring, ";base64,");
        if (!comma) return fail(g, uri, "a data: URI without \";base64,\": not read"), NULL;
        comma += 8;
        if (!base64_decode(g, uri, comma, strlen(comma), b)) return NULL;
    } else {
        char rel[1024];
        if (!local_path(g, uri, uri->valuestring, rel, sizeof rel) ||
            !read_buffer_file(g, uri, rel, b))
            return NULL;
    }
    if (!bl || !(bl->valuedouble >= 0) || bl->valuedouble > (double)b->len)
        return fail(g, buf, "buffer %d has %zu bytes, fewer than its byteLength", k, b->len), NULL;
    b->loaded = true;
    return b;
}

/* A whole number >= 0 at obj[key] (def when absent) into *out. */
static bool count_at(gltf *g, const cJSON *obj, const char *key, double def, size_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    double d = v ? (cJSON_IsNumber(v) ? v->valuedouble : -1) : def;
    if (!(d >= 0) || d != floor(d) || d > 9007199254740992.0)
        return fail(g, v, "expected %s: a whole number >= 0", key), false;
    *out = (size_t)d;
    return true;
}

/* Bytes per component of componentType ct, 0 for one a POSITION may not have. */
static size_t component_size(int ct)
{
    return ct == GL_FLOAT                              ? 4
           : ct == GL_SHORT || ct == GL_UNSIGNED_SHORT ? 2
           : ct == GL_BYTE || ct == GL_UNSIGNED_BYTE   ? 1
                                                       : 0;
}

/* Component p (raw) of type ct as a number, dequantized when normalized. */
static double component(const unsigned char *p, int ct, bool normalized)
{
    uint32_t u = ct == GL_FLOAT ? le32(p) : 0;
    float f;
    switch (ct) {
    case GL_FLOAT:
        memcpy(&f, &u, sizeof f);
        return f;
    case GL_BYTE:
        return normalized ? fmax((int8_t)p[0] / 127.0, -1.0) : (int8_t)p[0];
    case GL_UNSIGNED_BYTE:
        return normalized ? p[0] / 255.0 : p[0];
    case GL_SHORT: {
        int16_t v = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        return normalized ? fmax(v / 32767.0, -1.0) : v;
    }
    default: {
        uint16_t v = (uint16_t)(p[0] | p[1] << 8);
        return normalized ? v / 65535.0 : v;
    }
    }
}

/* A min/max value of component type ct as stored in the JSON, dequantized when normalized
 * (KHR_mesh_quantization stores them as the integers). */
static double dequantize(double v, int ct, bool normalized)
{
    if (!normalized || ct == GL_FLOAT) return v;
    double scale = ct == GL_BYTE            ? 127
                   : ct == GL_UNSIGNED_BYTE ? 255
                   : ct == GL_SHORT         ? 32767
                                            : 65535;
    return fmax(v / scale, -1.0);
}

/* The box of accessor a's VEC3 elements (min then max), from its buffer view: non-finite
 * coordinates are left out (with a warning). */
static bool bounds_from_data(gltf *g, int a, int ct, bool normalized, double *box)
{
    const cJSON *acc = g->accessors.item[a],
                *bv = cJSON_GetObjectItemCaseSensitive(acc, "bufferView");
    size_t count, off, voff, vlen, stride, esize = 3 * component_size(ct);
    int v, k;
    if (cJSON_GetObjectItemCaseSensitive(acc, "sparse"))
        return fail(g, acc, "a sparse POSITION accessor without min/max is not read"), false;
    if (!count_at(g, acc, "count", -1, &count) || !count_at(g, acc, "byteOffset", 0, &off))
        return false;
    if (!bv) return true; /* no view: all zeros (glTF), the box at 0 */
    if (!index_in(g, bv, &g->views, &v)) return false;
    const cJSON *view = g->views.item[v];
    const cJSON *bk = cJSON_GetObjectItemCaseSensitive(view, "buffer");
    if (!index_in(g, bk, &g->buffers, &k) || !count_at(g, view, "byteOffset", 0, &voff) ||
        !count_at(g, view, "byteLength", -1, &vlen) || !count_at(g, view, "byteStride", 0, &stride))
        return false;
    const gltf_buffer *b = buffer_at(g, k);
    if (!b) return false;
    if (stride == 0) stride = esize;
    if (voff > b->len || vlen > b->len - voff)
        return fail(g, view, "the view's bytes lie outside buffer %d (%zu bytes)", k, b->len),
               false;
    if (count && (stride < esize || off > vlen || vlen - off < esize ||
                  count - 1 > (vlen - off - esize) / stride))
        return fail(g, acc,
                    "%zu elements of %zu bytes (stride %zu) from byte %zu do not fit the "
                    "view's %zu bytes",
                    count, esize, stride, off, vlen),
               false;
    const unsigned char *p = b->data + voff + off;
    size_t skipped = 0, kept = 0;
    for (size_t e = 0; e < count; e++, p += stride) {
        double c[3];
        for (int d = 0; d < 3; d++) c[d] = component(p + (size_t)d * (esize / 3), ct, normalized);
        if (!(fabs(c[0]) <= FLT_MAX && fabs(c[1]) <= FLT_MAX && fabs(c[2]) <= FLT_MAX)) {
            skipped++;
            continue;
        }
        for (int d = 0; d < 3; d++) {
            if (!kept || c[d] < box[d]) box[d] = c[d];
            if (!kept || c[d] > box[3 + d]) box[3 + d] = c[d];
        }
        kept++;
    }
    if (skipped)
        host_warn("gltf",
                  "%s: accessors[%d]: %zu of %zu positions are not finite: left out of "
                  "the bounds",
                  g->name, a, skipped, count);
    return true;
}

/* The local bounds of primitive j of mesh m into box (min then max): its POSITION
 * accessor's min and max (dequantized for a normalized integer accessor), or, without
 * them, the box of its vertices read from the buffer; without POSITION (with a warning)
 * an empty box at 0. */
static bool read_bounds(gltf *g, const cJSON *prim, int m, int j, double *box)
{
    const cJSON *attrs =
        member(g, prim, "attributes", cJSON_IsObject, "an object of accessor indices");
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(attrs, "POSITION");
    int a;
    memset(box, 0, 6 * sizeof *box);
    if (g->failed) return false;
    if (!pos) {
        host_warn("gltf",
                  "%s: meshes[%d].primitives[%d] has no POSITION: bounds: an empty box at 0",
                  g->name, m, j);
        return true;
    }
    if (!index_in(g, pos, &g->accessors, &a)) return false;
    const cJSON *acc = g->accessors.item[a], *min = cJSON_GetObjectItemCaseSensitive(acc, "min"),
                *max = cJSON_GetObjectItemCaseSensitive(acc, "max");
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(acc, "componentType");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(acc, "type");
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(acc, "normalized");
    int ctype = !ct ? GL_FLOAT
                : cJSON_IsNumber(ct) && ct->valuedouble >= 0 && ct->valuedouble < 65536
                    ? (int)ct->valuedouble
                    : 0; /* no component type has that number: refused below */
    if ((ct && (!cJSON_IsNumber(ct) || !component_size(ctype))) ||
        (type && (!cJSON_IsString(type) || strcmp(type->valuestring, "VEC3") != 0)))
        return fail(g, acc,
                    "a POSITION accessor must be a VEC3 of floats or of (with "
                    "KHR_mesh_quantization) 8- or 16-bit integers"),
               false;
    bool normalized = cJSON_IsTrue(norm);
    if ((!min || !max) && !ct) { /* no componentType either: no data to read */
        host_warn("gltf",
                  "%s: accessors[%d] (POSITION of meshes[%d].primitives[%d]) has neither min/max "
                  "nor componentType, which glTF requires: bounds: an empty box at 0",
                  g->name, a, m, j);
        return true;
    }
    if (!min || !max) return bounds_from_data(g, a, ctype, normalized, box);
    if (!numbers(g, min, 3, box) || !numbers(g, max, 3, box + 3)) return false;
    for (int k = 0; k < 6; k++) box[k] = dequantize(box[k], ctype, normalized);
    for (int k = 0; k < 3; k++)
        if (box[k] > box[3 + k])
            return fail(g, acc, "min is above max on axis %c", "xyz"[k]), false;
    return true;
}

/* "material": the name of the primitive's material, cleaned; nothing without one. */
static bool add_material(gltf *g, cJSON *o, const cJSON *prim)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(prim, "material");
    char clean[NAME_MAX_BYTES + 1];
    int k;
    if (!v) return true;
    if (!index_in(g, v, &g->materials, &k)) return false;
    const cJSON *name = member(g, g->materials.item[k], "name", cJSON_IsString, "a string");
    if (!name) return !g->failed;
    clean_warn(g, name->valuestring, clean, "materials", k);
    return !clean[0] || add(g, o, "material", cJSON_CreateString(clean));
}

/* {"min": [...], "max": [...]} of box (min then max). NULL when memory ran out. */
static cJSON *box_json(gltf *g, const double *box)
{
    cJSON *b = cJSON_CreateObject();
    if (!b) return out_of_memory(g), NULL;
    if (add(g, b, "min", cJSON_CreateDoubleArray(box, 3)) &&
        add(g, b, "max", cJSON_CreateDoubleArray(box + 3, 3)))
        return b;
    cJSON_Delete(b);
    return NULL;
}

/* The mesh component entry of primitive j of mesh m. NULL on error. */
static cJSON *primitive(gltf *g, const cJSON *prim, int m, int j)
{
    char res[NAME_MAX_BYTES + 1];
    double box[6];
    if (!cJSON_IsObject(prim))
        return fail(g, prim, "expected a primitive object, found %s", host_json_type_name(prim)),
               NULL;
    if (!read_bounds(g, prim, m, j, box)) return NULL;
    snprintf(res, sizeof res, "%s#mesh%d/prim%d", g->base, m, j);
    cJSON *o = cJSON_CreateObject();
    if (!o) return out_of_memory(g), NULL;
    if (add(g, o, "mesh", cJSON_CreateString(res)) && add_material(g, o, prim) &&
        add(g, o, "visible", cJSON_CreateTrue()) && add(g, o, "bounds", box_json(g, box)))
        return o;
    cJSON_Delete(o);
    return NULL;
}

/* "mesh": one entry per primitive of the node's mesh; nothing without a mesh. A mesh
 * without primitives is an error (glTF requires at least one). */
static bool add_meshes(gltf *g, cJSON *e, int i)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g->nodes.item[i], "mesh"), *prims, *p;
    int m, j = 0;
    if (!v) return true;
    if (!index_in(g, v, &g->meshes, &m)) return false;
    prims =
        member(g, g->meshes.item[m], "primitives", cJSON_IsArray, "an array of primitive objects");
    if (!prims || !prims->child) {
        if (!g->failed) fail(g, g->meshes.item[m], "expected \"primitives\": a non-empty array");
        return false;
    }
    cJSON *list = cJSON_CreateArray();
    if (!add(g, e, "mesh", list)) return false;
    cJSON_ArrayForEach(p, prims)
    {
        cJSON *o = primitive(g, p, m, j++);
        if (!o) return false;
        cJSON_AddItemToArray(list, o);
    }
    return true;
}

/* The entity of node i. NULL on error. */
static cJSON *node_entity(gltf *g, int i)
{
    char id[24];
    cJSON *e = cJSON_CreateObject();
    if (!e) return out_of_memory(g), NULL;
    snprintf(id, sizeof id, "node%d", i);
    if (add(g, e, "id", cJSON_CreateString(id)) && add_name(g, e, i) && add_transform(g, e, i) &&
        add_meshes(g, e, i))
        return e;
    cJSON_Delete(e);
    return NULL;
}

/* Push node i's children onto stack (at *top) so the first child is popped first. */
static void push_children(gltf *g, int i, int *stack, int *top)
{
    const cJSON *kids = cJSON_GetObjectItemCaseSensitive(g->nodes.item[i], "children"), *k;
    int from = *top;
    cJSON_ArrayForEach(k, kids) stack[(*top)++] = (int)k->valuedouble; /* checked in links */
    for (int a = from, b = *top - 1; a < b; a++, b--) {
        int t = stack[a];
        stack[a] = stack[b];
        stack[b] = t;
    }
}

/* One entity per node under roots, in pre-order, appended to list. */
static bool walk(gltf *g, const int *roots, int n, cJSON *list)
{
    int *stack = malloc(((size_t)g->nodes.count + 1) * sizeof *stack), top = 0;
    if (!stack) return out_of_memory(g);
    for (int r = 0; r < n && !g->failed; r++) {
        stack[top++] = roots[r];
        while (top > 0 && !g->failed) {
            int i = stack[--top];
            cJSON *e = node_entity(g, i);
            if (e) cJSON_AddItemToArray(list, e);
            push_children(g, i, stack, &top);
        }
    }
    free(stack);
    return !g->failed;
}

/* The scene tree of the file. NULL on error. */
static cJSON *build_scene(gltf *g)
{
    int *roots = NULL, n = 0;
    cJSON *scene = cJSON_CreateObject(), *list = cJSON_CreateArray();
    if (!scene || !add(g, scene, "version", cJSON_CreateNumber(1))) {
        cJSON_Delete(scene);
        cJSON_Delete(list);
        return out_of_memory(g), NULL;
    }
    if (add(g, scene, "entities", list) && pick_roots(g, &roots, &n)) walk(g, roots, n, list);
    free(roots);
    if (!g->failed) return scene;
    cJSON_Delete(scene);
    return NULL;
}

/* The import of data; external buffer files are read from dir (NULL: none are). */
static cJSON *import(const char *name, const char *dir, const unsigned char *data, size_t size,
                     char *err, size_t errlen)
{
    gltf g = {.name = name, .dir = dir, .err = err, .errlen = errlen};
    const char *slash = strrchr(name, '/');
    cJSON *scene = NULL;
    if (errlen) err[0] = '\0';
    clean_name(slash ? slash + 1 : name, g.base, sizeof g.base);
    if (read_json(&g, data, size) && read_top(&g) && link_children(&g) && check_acyclic(&g))
        scene = build_scene(&g);
    cJSON_Delete(g.root);
    free(g.text);
    free(g.nodes.item);
    free(g.meshes.item);
    free(g.accessors.item);
    free(g.materials.item);
    free(g.scenes.item);
    for (int k = 0; g.bufs && k < g.buffers.count; k++) free(g.bufs[k].owned);
    free(g.bufs);
    free(g.buffers.item);
    free(g.views.item);
    free(g.parent);
    return scene;
}

cJSON *host_gltf_import(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *bytes = host_json_read_text(path, &len, err, errlen); /* any bytes, NUL added */
    if (!bytes) return NULL;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        strcpy(dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
    cJSON *scene = import(path, dir, (const unsigned char *)bytes, len, err, errlen);
    free(bytes);
    return scene;
}

cJSON *host_gltf_import_memory(const char *name, const unsigned char *data, size_t size, char *err,
                               size_t errlen)
{
    return import(name, NULL, data, size, err, errlen);
}
