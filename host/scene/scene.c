/* SPDX-License-Identifier: MIT */
/* scene.c: scene load and save (scene.h).
 *
 * Loading: read and parse -> check the shape (version, entities, ids unique) -> create
 * every entity in one batch -> for each manager in registration order, hand each entity
 * its component (load_component); a reference (scene_resolve) loads the calling
 * manager's component of the referenced entity first, so files need no particular order
 * (a reference loop is an error, not a hang) -> keep components of managers that are not
 * loaded -> commit ids and kept JSON to the store. Any failure destroys what was created.
 *
 * Saving: walk live entities in index order; ids come from the store, or "e<index>"
 * made unique for entities that never had one.
 *
 * The store itself (ids and kept JSON per entity, the store in a snapshot) is store.c;
 * what both share is scene_int.h. Writing the file whole or not at all is savefile.c.
 */
#include "scene.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <math.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ahead.h"
#include "gltf.h"
#include "jplain.h"
#include "json.h"
#include "jwrite.h"
#include "log.h"
#include "signame.h"
#include "pstate.h"
#include "savefile.h"
#include "scene_int.h"
#include "spool.h"
#include "thread.h"
#include "world.h"

#define MAX_REFERENCE_DEPTH 1000 /* references loaded ahead of their turn, nested */

/* Run expr, a call of manager m's callback `what`, named as the plugin call running now
 * (guard.h: the watchdog tells a stuck call from a long load or save by it). */
#define PLUGIN_CALL(m, what, expr)                                                                 \
    do {                                                                                           \
        host_call call_ = {(m)->update_call.plugin, what, (m)->name}; /* its owner's name */       \
        const host_call *was_ = host_call_enter(&call_);                                           \
        expr;                                                                                      \
        host_call_leave(was_);                                                                     \
    } while (0)

/* ---- string set: open addressing over positions, for scene ids ---- */

typedef struct id_table {
    uint64_t *slot; /* the id's hash << 32 | its position + 1; 0 empty */
    uint32_t mask;
} id_table;

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int table_init(id_table *t, uint32_t n)
{
    uint32_t cap = 16;
    while (cap < n * 2) cap *= 2;
    t->slot = calloc(cap, sizeof *t->slot);
    t->mask = cap - 1;
    return t->slot ? 0 : -1;
}

/* The position stored under id (names[pos] compared), or -1; with `insert`, store pos
 * when absent and return -1. The hash kept in each slot decides most probes without
 * reading the other id (a cache miss each, in a table of a million). */
static long table_find(id_table *t, const char *const *names, const char *id, long insert)
{
    uint32_t h = hash_str(id);
    for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uint64_t s = t->slot[i];
        if (!s) {
            if (insert >= 0) t->slot[i] = (uint64_t)h << 32 | ((uint32_t)insert + 1);
            return -1;
        }
        uint32_t pos = (uint32_t)s - 1;
        if ((uint32_t)(s >> 32) == h && strcmp(names[pos], id) == 0) return (long)pos;
    }
}

/* ---- loading ----
 * Two passes over the document's text, no tree. The first (index_document) reads the
 * whole text with an unchecked reader: every byte checked as JSON (duplicate keys and
 * \u0000 included), the top level and the ids checked, and where each component's value
 * starts noted per entity and manager. The second hands each value to its manager: a
 * reader started at the value (read_component), or the value parsed into a tree
 * (load_component, for plugins without a reader). Errors are located by offset: line and
 * column from the text, the JSON path by walking the text up to the offset. */

typedef struct kept_value { /* a component no loaded manager takes, or a top-level extra */
    uint32_t entity;
    size_t key_at, value_at;
} kept_value;

typedef struct id_block { /* scene ids, copied: blocks never move */
    struct id_block *next;
    size_t used, size;
    char data[];
} id_block;

typedef struct mgr_load {
    uint32_t count; /* the manager's values in the document (what reserve() is told) */
    uint64_t ns;    /* how long loading them took */
} mgr_load;

typedef struct scene_load {
    host_scene_store *sc; /* the store it loads into (its world: w) */
    host_world *w;
    const char *path;
    const char *text; /* the document */
    size_t len;
    bool lines; /* positions as line:col (not for an imported glTF: its text is made) */
    uint32_t n, cap;
    const char **ids;
    size_t *id_at;    /* where each entity's id (else its object) starts */
    uint64_t *at;     /* n x managers: offset + 1 of the component's value, 0: none */
    kept_value *kept; /* components to keep as JSON */
    size_t nkept, capkept;
    cJSON *extra; /* unknown top-level keys, in file order */
    id_block *pool;
    ecs_entity *ents;
    id_table table;
    uint8_t *state;            /* n x managers: 0 not loaded, 1 loading, 2 loaded */
    host_manager *const *mgrs; /* the managers that load: the world's, or a new version's */
    size_t managers;
    size_t current;         /* the manager whose component is being loaded */
    size_t current_at;      /* where its value starts: where reference errors point */
    host_jreader **readers; /* one per reference depth, made when first needed */
    int nreaders;
    host_jreader *reader;   /* the reader of the component being read, or NULL */
    host_json_arena *arena; /* trees for load_component */
    const cJSON *tree;      /* the tree given to a load_component, and where it starts */
    size_t tree_at;
    int depth;
    bool failed;
    bool edit;         /* host_scene_edit: references name live entities (scene id or e<index>) */
    long bad;          /* the entity whose component failed first, or -1 (set with `failed`) */
    bool captured;     /* the host's own capture (a migration): ids unique by construction, read
                          and put in the id table only when a reference asks for one */
    bool ids_read;     /* captured: l->ids hold the ids */
    bool quiet;        /* a piece of a shared pass one: an error only sets `failed` (its message
                          would be dropped, and locating it walks the text from the start) */
    host_ahead *ahead; /* pass two's objects and arrays lexed by a second thread (ahead.h) */
    uint64_t reads;    /* objects and arrays given to a read_component */
    uint32_t last_ref; /* the entity a reference named last, + 1 (0: none) */
    /* how long each step took, ns (the -v line of a file's load): the text read, pass one
     * (with the id checks), the entities' creation, the components, the store */
    uint64_t read_ns, pass_ns, create_ns, components_ns, store_ns;
    struct mgr_load *per; /* managers entries: how many values each has, and their time */
    char error[768];
    char fallback[300]; /* a reference error, used if the plugin does not say more */
} scene_load;

#define NO_POS SIZE_MAX

/* Record the first error, located at offset `at` of the text (NO_POS: no position). */
static void load_fail_at(scene_load *l, size_t at, const char *fmt, ...) ECS_PRINTF(3, 4);
static void load_fail_at(scene_load *l, size_t at, const char *fmt, ...)
{
    if (l->failed) return;
    l->failed = true;
    if (l->quiet) return;
    char msg[512], where[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at == NO_POS || at > l->len) {
        host_format(l->error, sizeof l->error, "%s: %s", l->path, msg);
        return;
    }
    host_json_path_at(l->text, l->len, at, where, sizeof where);
    int line, col;
    host_jparse_position(l->text, l->text + at, &line, &col);
    if (l->lines)
        host_format(l->error, sizeof l->error, "%s:%d:%d: %s%s%s", l->path, line, col, where,
                    *where ? ": " : "", msg);
    else
        host_format(l->error, sizeof l->error, "%s: %s%s%s", l->path, where, *where ? ": " : "",
                    msg);
}

/* A syntax error at offset `at` as "file:line:col: what" (no JSON path: the text around
 * it is not JSON). */
static void syntax_fail(scene_load *l, size_t at, host_jparse_status status, const char *msg)
{
    if (l->failed) return;
    int line, col;
    l->failed = true;
    if (l->quiet) return;
    host_jparse_position(l->text, l->text + at, &line, &col);
    if (status == HOST_JPARSE_EMPTY || !l->lines)
        host_format(l->error, sizeof l->error, "%s: %s", l->path, msg);
    else
        host_format(l->error, sizeof l->error, "%s:%d:%d: %s", l->path, line, col, msg);
}

/* The reader's error as the load's: a syntax error as "file:line:col: what". */
static bool reader_failed(scene_load *l, const host_jreader *r)
{
    size_t at;
    host_jparse_status syntax;
    const char *msg;
    if (!host_jr_error(r, &at, &syntax, &msg)) return false;
    if (syntax != HOST_JPARSE_OK)
        syntax_fail(l, at, syntax, msg);
    else
        load_fail_at(l, at, "%s", msg);
    return true;
}

/* The first number in v (depth first) that is not finite, or NULL. JSON has no infinity,
 * but 1e999 reads as one: kept as it is, it could never be saved again (jwrite.h). */
static const cJSON *non_finite_in(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return isfinite(v->valuedouble) ? NULL : v;
    for (const cJSON *c = v->child; c; c = c->next) {
        const cJSON *bad = non_finite_in(c);
        if (bad) return bad;
    }
    return NULL;
}

/* The end of the (checked) value at offset `at`. */
static size_t value_end(scene_load *l, host_jreader *r, size_t at)
{
    host_jr_start(r, l->text, l->len, at, HOST_JR_TRUSTED); /* pass one matched its brackets */
    host_jr_api(r)->skip(host_jr_api(r));
    return host_jr_offset(r);
}

/* A value [at, end) that did not parse: where and why (pass one only matched its
 * brackets; this is where the rest of it is checked). */
static void value_syntax_fail(scene_load *l, size_t at, const host_jparse_error *e)
{
    char what[160];
    if (e->status == HOST_JPARSE_OUT_OF_MEMORY) {
        load_fail_at(l, NO_POS, "out of memory");
        return;
    }
    host_jparse_error in_text = {e->status, at + e->offset, at + e->first};
    host_jparse_describe(l->text, l->len, &in_text, what, sizeof what);
    syntax_fail(l, in_text.offset, e->status, what);
}

/* The value at `at` as a new tree (malloc'd, cJSON_Delete it) that can be kept and saved
 * again: NULL with the error where a number is out of a double's range or memory ran out. */
static cJSON *keepable_tree(scene_load *l, host_jreader *r, size_t at)
{
    size_t end = value_end(l, r, at);
    host_jparse_error e;
    cJSON *v = host_jparse_keys(l->text + at, end - at, NULL, true, &e);
    if (!v) return value_syntax_fail(l, at, &e), NULL;
    const cJSON *bad = non_finite_in(v);
    if (!bad) return v;
    size_t off = at;
    const char *found = host_json_find(l->text + at, end - at, v, bad);
    if (found) off = (size_t)(found - l->text);
    load_fail_at(l, off,
                 "expected a finite number, found %s (out of a double's range; kept as it is, it "
                 "could not be saved)",
                 bad->valuedouble < 0 ? "-inf" : "inf");
    cJSON_Delete(v);
    return NULL;
}

/* A copy of id (n bytes) that never moves; NULL when out of memory. */
static const char *pool_copy(scene_load *l, const char *id, size_t n)
{
    id_block *b = l->pool;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > 65536 ? n + 1 : 65536;
        if (!(b = malloc(sizeof *b + size))) return NULL;
        *b = (id_block){l->pool, 0, size};
        l->pool = b;
    }
    char *out = b->data + b->used;
    memcpy(out, id, n);
    out[n] = '\0';
    b->used += n + 1;
    return out;
}

/* Room for `need` entities (their ids, offsets and component offsets). */
static bool entity_room(scene_load *l, uint32_t need)
{
    if (need <= l->cap) return true;
    uint32_t cap = l->cap ? l->cap : 1024;
    while (cap < need) cap = cap > UINT32_MAX / 2 ? need : cap * 2;
    size_t m = l->managers ? l->managers : 1;
    const char **ids = realloc(l->ids, cap * sizeof *ids);
    if (ids) l->ids = ids;
    size_t *id_at = ids ? realloc(l->id_at, cap * sizeof *id_at) : NULL;
    if (id_at) l->id_at = id_at;
    uint64_t *at = id_at ? realloc(l->at, cap * m * sizeof *at) : NULL;
    if (!at) return false;
    l->at = at;
    l->cap = cap;
    return true;
}

static bool entity_reserve(scene_load *l) /* room for entity n */
{
    return l->n < l->cap || entity_room(l, l->n + 1);
}

static bool keep_value(scene_load *l, uint32_t entity, size_t key_at, size_t value_at)
{
    if (l->nkept == l->capkept) {
        size_t cap = l->capkept ? l->capkept * 2 : 64;
        kept_value *v = realloc(l->kept, cap * sizeof *v);
        if (!v) return false;
        l->kept = v;
        l->capkept = cap;
    }
    l->kept[l->nkept++] = (kept_value){entity, key_at, value_at};
    return true;
}

/* The manager among l->mgrs that loads components named key, or l->managers. */
/* The manager loaded under the key k[0..n) (not NUL-terminated), or l->managers. */
static size_t manager_named_n(const scene_load *l, const char *k, size_t n)
{
    for (size_t m = 0; m < l->managers; m++) { /* the first byte rules most out */
        const char *name = l->mgrs[m]->name;
        if (name[0] == k[0] && host_manager_loads(l->mgrs[m]) && strlen(name) == n &&
            memcmp(name, k, n) == 0)
            return m;
    }
    return l->managers;
}

static size_t manager_named(const scene_load *l, const char *key)
{
    return manager_named_n(l, key, strlen(key));
}

/* A plain string at p (its '"'): its bytes' end (the closing '"'), or NULL when it holds an
 * escape or a control byte, or the text ends first. */
static const char *plain_string(const char *p, const char *end)
{
    const char *q = host_json_plain_end(p + 1, end);
    return q < end && *q == '"' ? q : NULL;
}

#define FAST_KEYS 8

typedef struct fast_key {
    const char *s; /* its bytes (not NUL-terminated) */
    size_t n, key_at, value_at;
} fast_key;

/* index_entity's common case read straight from the text: an entity object at `at` with at
 * most FAST_KEYS keys, all plain strings (no escape) and each once, a plain non-empty "id",
 * values passed over as a SKIM reader passes them, and a ',' or ']' after it. Its index
 * is added to l and the offset of that ',' or ']' returned; 0 (nothing added) for anything
 * else, which index_entity then reads and, where it is wrong, says so. */
static size_t fast_entity(scene_load *l, size_t at)
{
    const char *text = l->text, *end = text + l->len, *p = text + at, *id = NULL;
    fast_key keys[FAST_KEYS];
    int nk = 0;
    size_t id_len = 0, id_at = 0, m = l->managers;
    p = host_json_skip_space(p, end);
    if (l->captured || p >= end || *p != '{') return 0;
    for (p++;;) {
        p = host_json_skip_space(p, end);
        const char *k = p,
                   *q = p < end && *p == '"' && nk < FAST_KEYS ? plain_string(p, end) : NULL;
        if (!q) return 0;
        size_t kn = (size_t)(q - k - 1);
        for (int j = 0; j < nk; j++)
            if (keys[j].n == kn && memcmp(keys[j].s, k + 1, kn) == 0) return 0; /* a key twice */
        p = host_json_skip_space(q + 1, end);
        if (p == end || *p != ':') return 0;
        p = host_json_skip_space(p + 1, end);
        keys[nk] = (fast_key){k + 1, kn, (size_t)(k - text), (size_t)(p - text)};
        if (kn == 2 && k[1] == 'i' && k[2] == 'd') {
            const char *e = p < end && *p == '"' ? plain_string(p, end) : NULL;
            if (!e || e == p + 1) return 0; /* not a plain string, or empty */
            id = p + 1, id_len = (size_t)(e - p - 1), id_at = (size_t)(p - text);
            p = e + 1;
        } else if (!(p = host_jr_skim(p, end))) {
            return 0;
        }
        nk++;
        p = host_json_skip_space(p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p == end || *p != '}') return 0;
        break;
    }
    p = host_json_skip_space(p + 1, end);
    if (p == end || (*p != ',' && *p != ']') || !id || !entity_reserve(l)) return 0;
    uint32_t i = l->n;
    size_t nkept = l->nkept;
    memset(&l->at[(size_t)i * m], 0, m * sizeof *l->at);
    for (int j = 0; j < nk; j++) {
        if (keys[j].value_at == id_at) continue; /* the id */
        size_t k = manager_named_n(l, keys[j].s, keys[j].n);
        if (k < m)
            l->at[(size_t)i * m + k] = keys[j].value_at + 1;
        else if (!keep_value(l, i, keys[j].key_at, keys[j].value_at))
            return l->nkept = nkept, 0;
    }
    if (!(l->ids[i] = pool_copy(l, id, id_len))) return l->nkept = nkept, 0;
    l->id_at[i] = id_at;
    l->n++;
    return (size_t)(p - text);
}

/* Is the value at r of type want? If not, the load fails at `at`: "expected <what>, found
 * <its type>" (unless the reader failed first: its own message stands). */
static bool expect_type(scene_load *l, host_jreader *r, size_t at, ecs_json_type want,
                        const char *what)
{
    ecs_json_reader *api = host_jr_api(r);
    ecs_json_type t = api->peek(api);
    if (t == want) return true;
    if (!api->failed(api)) load_fail_at(l, at, "expected %s, found %s", what, host_jr_type_name(t));
    return false;
}

/* One entity object of "entities" (r before it): its id and where its components are. */
static bool index_entity(scene_load *l, host_jreader *r)
{
    ecs_json_reader *api = host_jr_api(r);
    size_t obj_at = host_jr_offset(r), m = l->managers;
    if (!expect_type(l, r, obj_at, ECS_JSON_OBJECT, "an entity object")) return false;
    obj_at = host_jr_offset(r);
    if (!entity_reserve(l)) return load_fail_at(l, NO_POS, "out of memory"), false;
    uint32_t i = l->n;
    memset(&l->at[(size_t)i * m], 0, m * sizeof *l->at);
    l->ids[i] = NULL;
    l->id_at[i] = obj_at;
    const char *key, *id;
    size_t n;
    api->begin_object(api);
    while (api->key(api, &key)) {
        size_t key_at = host_jr_last(r), value_at = host_jr_offset(r);
        bool is_id = key[0] == 'i' && key[1] == 'd' && !key[2];
        if (is_id && l->captured) { /* the host's own: read when asked */
            l->id_at[i] = value_at;
            l->ids[i] = "";
            api->skip(api);
            continue;
        }
        if (is_id) {
            if (api->peek(api) != ECS_JSON_STRING || !api->string(api, &id, &n) || !n) {
                if (!api->failed(api))
                    load_fail_at(l, value_at, "expected \"id\": a non-empty string");
                return false;
            }
            if (!(l->ids[i] = pool_copy(l, id, n)))
                return load_fail_at(l, NO_POS, "out of memory"), false;
            l->id_at[i] = value_at;
            continue;
        }
        size_t k = manager_named(l, key);
        if (k < m)
            l->at[(size_t)i * m + k] = value_at + 1;
        else if (!keep_value(l, i, key_at, value_at))
            return load_fail_at(l, NO_POS, "out of memory"), false;
        if (!api->skip(api)) return false;
    }
    if (api->failed(api)) return false;
    if (!l->ids[i]) return load_fail_at(l, obj_at, "expected \"id\": a non-empty string"), false;
    l->n++;
    return true;
}

/* ---- pass one shared by two threads ----
 * A large document's "entities" array is cut at nominal boundaries into pieces of about
 * SPLIT_PIECE bytes. This thread indexes from the start, piece after piece; a second thread
 * takes the last piece, then the pieces below it one after the other, so whichever thread
 * is faster (a vCPU can be slowed for seconds by what shares its core) does more of them.
 * A piece in the middle is either thread's: whoever comes to it first takes it (a lock).
 *
 * The second thread starts a piece at an entity boundary found past its nominal one (a
 * '{' after "}" and ",", white space around the comma; a candidate whose object is no
 * entity is passed over, up to SPLIT_TRIES) and indexes entity objects from there into a
 * scene_load of its own, until it comes exactly to the start of the piece it did before
 * (they link), or to the array's ']'. When that start is not an element boundary, its
 * reading passes it by and goes on to the ']'. This thread indexes up to the lowest start
 * the other found: when it arrives exactly there at an element of "entities", the pieces
 * from there on are taken in order as long as each found nothing wrong and links to the
 * next; at the first that did not, this thread reads on from where it starts. If it does
 * not arrive exactly there, everything of the other thread is dropped. Either way the
 * index, and every error message, are those of a single pass. */

#define SPLIT_BYTES  ((size_t)1 << 20) /* smaller documents: one thread */
#define SPLIT_PIECE  ((size_t)1 << 19) /* a piece's size, nominally */
#define SPLIT_PIECES 64                /* at most */
#define SPLIT_SEARCH ((size_t)1 << 20) /* how far past a candidate the next is looked for */
#define SPLIT_TRIES  16                /* candidates tried before a piece gives up */

static void load_free(scene_load *l);

typedef struct split_piece {
    scene_load l;        /* its index: its own arrays and id pool */
    size_t nominal;      /* where the search for its start begins */
    _Atomic size_t at;   /* its first entity's '{' (0: none found), once `decided` */
    atomic_bool decided; /* set by the second thread */
    size_t end;          /* the ',' before the next piece's start, or the array's ']' */
    bool linked;         /* it came to the next piece's start (else to the ']') */
    bool ok;             /* read whole, nothing wrong */
} split_piece;

typedef struct split {
    host_jreader *r; /* the second thread's */
    pthread_t thread;
    pthread_mutex_t lock;
    int pieces; /* piece k spans nominally [nominal(k), nominal(k + 1)) */
    int mine;   /* under lock: pieces [0, mine) are this thread's */
    int theirs; /* under lock: pieces [theirs, pieces) are the second thread's */
    atomic_bool stop;
    split_piece piece[]; /* piece 0 is this thread's from the start: unused */
} split;

/* The first '{' in text[from, from + SPLIT_SEARCH) that follows "}" and "," (white space
 * around the comma), or 0. */
static size_t guess_boundary(const char *text, size_t from, size_t len)
{
    size_t stop = len - from > SPLIT_SEARCH ? from + SPLIT_SEARCH : len;
    for (size_t i = from; i < stop; i++) {
        const char *p = memchr(text + i, '{', stop - i), *q = p;
        if (!p) return 0;
        i = (size_t)(p - text);
        while (q > text && host_json_space(q[-1])) q--;
        if (q == text || q[-1] != ',') continue;
        for (q--; q > text && host_json_space(q[-1]);) q--;
        if (q > text && q[-1] == '}') return i;
    }
    return 0;
}

/* One entity object at `at` into p->l (r goes on from the ',' or ']' after it); false when
 * it is none (nothing kept of it then). */
static bool piece_entity(split_piece *p, host_jreader *r, size_t at)
{
    scene_load *l = &p->l;
    size_t after = fast_entity(l, at);
    if (after) {
        host_jr_start(r, l->text, l->len, after, HOST_JR_SKIM);
        return true;
    }
    host_jr_start(r, l->text, l->len, at, HOST_JR_SKIM);
    if (index_entity(l, r) && !host_jr_error(r, NULL, NULL, NULL)) return true;
    if (l->n == 0) l->nkept = 0; /* a candidate that was no entity: try the next afresh */
    return false;
}

/* The second thread's piece p: its start (before `below`, the start of the piece it did
 * before, 0: none), then entity objects each after a ',', up to `below` or a ']'. */
static void piece_run(split *s, split_piece *p, size_t below)
{
    scene_load *l = &p->l;
    const char *text = l->text, *end = text + l->len;
    size_t at = 0, from = p->nominal, limit = below ? below : l->len;
    for (int tries = 0; !at && tries < SPLIT_TRIES && from < limit; tries++) {
        size_t c = guess_boundary(text, from, l->len);
        if (!c || c >= limit) break;
        if (piece_entity(p, s->r, c)) at = c;
        from = c + 1;
        l->failed = false;
    }
    atomic_store(&p->at, at); /* this thread may be waiting for it */
    atomic_store(&p->decided, true);
    while (at) {
        const char *q = host_json_skip_space(text + host_jr_offset(s->r), end);
        if (q < end && *q == ']') {
            p->end = (size_t)(q - text);
            p->ok = true;
            break;
        }
        if (q == end || *q != ',') break;
        const char *comma = q;
        q = host_json_skip_space(q + 1, end);
        if (q == end || *q != '{') break;  /* a trailing comma, or not an object */
        if ((size_t)(q - text) == below) { /* the piece above starts here: linked */
            p->end = (size_t)(comma - text);
            p->ok = p->linked = true;
            break;
        }
        if ((size_t)(q - text) > below) below = 0; /* passed it by: on to the ']' */
        if (atomic_load_explicit(&s->stop, memory_order_relaxed) ||
            !piece_entity(p, s->r, (size_t)(q - text)))
            break;
    }
}

/* The second thread: the last piece (its own from the start), then the pieces below it
 * one after the other, while this thread has not come to them. */
static void *split_run(void *arg)
{
    split *s = arg;
    size_t below = 0; /* the lowest start found so far */
    for (int k = s->pieces - 1;;) {
        split_piece *p = &s->piece[k];
        piece_run(s, p, below);
        size_t at = atomic_load(&p->at);
        if (at) below = at;
        pthread_mutex_lock(&s->lock);
        k = s->theirs - 1;
        bool take = k >= s->mine && !atomic_load(&s->stop);
        if (take) s->theirs = k;
        pthread_mutex_unlock(&s->lock);
        if (!take) return NULL;
    }
}

static size_t piece_nominal(size_t array, size_t len, int pieces, int k)
{
    return array + (len - array) / (size_t)pieces * (size_t)k;
}

/* Start the second thread for l's entities array, whose first element is at `array`;
 * NULL when the document is small, or no thread or memory was to be had. */
static split *split_start(scene_load *l, size_t array)
{
    if (l->captured || l->len < SPLIT_BYTES || array >= l->len) return NULL;
    size_t n = (l->len - array) / SPLIT_PIECE;
    int pieces = n < 2 ? 2 : n > SPLIT_PIECES ? SPLIT_PIECES : (int)n;
    split *s = calloc(1, sizeof *s + (size_t)pieces * sizeof(split_piece));
    if (!s || !(s->r = host_jr_new())) {
        free(s);
        return NULL;
    }
    s->pieces = pieces;
    s->theirs = pieces - 1; /* the last piece is the second thread's */
    s->mine = 1;
    for (int k = 1; k < pieces; k++) {
        split_piece *p = &s->piece[k];
        p->l = (scene_load){.quiet = true,
                            .sc = l->sc,
                            .w = l->w,
                            .path = l->path,
                            .text = l->text,
                            .len = l->len,
                            .lines = l->lines,
                            .mgrs = l->mgrs,
                            .managers = l->managers,
                            .bad = -1};
        p->nominal = piece_nominal(array, l->len, pieces, k);
        atomic_init(&p->at, 0);
        atomic_init(&p->decided, false);
    }
    atomic_init(&s->stop, false);
    pthread_mutex_init(&s->lock, NULL);
    if (host_thread_start(&s->thread, split_run, s, "ecs-scene-index")) return s;
    pthread_mutex_destroy(&s->lock);
    host_jr_free(s->r);
    free(s);
    return NULL;
}

/* This thread's reading is at `at` (an element's start), past the nominal boundary of
 * the piece after its own: 0 when that piece (and any others `at` is past) is now this
 * thread's; else the second thread's: the lowest start it found, where this thread is to
 * arrive (SIZE_MAX: it found none, this thread reads to the end). */
static size_t split_reached(split *s, size_t at)
{
    pthread_mutex_lock(&s->lock);
    while (s->mine < s->theirs && at >= s->piece[s->mine].nominal) s->mine++;
    int k = s->mine;
    bool theirs = k >= s->theirs && k < s->pieces && at >= s->piece[k].nominal;
    pthread_mutex_unlock(&s->lock);
    if (!theirs) return 0;
    for (; k < s->pieces; k++) { /* decided downwards: the lowest is the last */
        split_piece *p = &s->piece[k];
        while (!atomic_load(&p->decided)) sched_yield();
        size_t start = atomic_load(&p->at);
        if (start) return start;
    }
    return SIZE_MAX;
}

/* Append piece p's index to l: false (l failed) when out of memory. */
static bool piece_take(scene_load *l, split_piece *p)
{
    scene_load *b = &p->l;
    size_t m = l->managers;
    if (!entity_room(l, l->n + b->n)) return load_fail_at(l, NO_POS, "out of memory"), false;
    for (size_t k = 0; k < b->nkept; k++)
        if (!keep_value(l, l->n + b->kept[k].entity, b->kept[k].key_at, b->kept[k].value_at))
            return load_fail_at(l, NO_POS, "out of memory"), false;
    memcpy(l->ids + l->n, b->ids, b->n * sizeof *b->ids);
    memcpy(l->id_at + l->n, b->id_at, b->n * sizeof *b->id_at);
    memcpy(l->at + (size_t)l->n * m, b->at, (size_t)b->n * m * sizeof *b->at);
    id_block **tail = &b->pool; /* its ids' blocks join l's */
    while (*tail) tail = &(*tail)->next;
    *tail = l->pool;
    l->pool = b->pool;
    b->pool = NULL;
    l->n += b->n;
    return true;
}

/* Stop and wait for the second thread; when this thread arrived exactly at `start` (the
 * lowest start it found; 0: not there), take its pieces from there in order, as long as
 * each is sound and links to the next. Returns where the taken ones end (a ',' before the
 * next element, or the ']'), 0 for none. Frees s. */
static size_t split_finish(scene_load *l, split *s, size_t start, bool there)
{
    if (!there) atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    size_t end = 0;
    uint32_t first = l->n, pieces = 0;
    int k = s->theirs;
    while (k < s->pieces && atomic_load(&s->piece[k].at) != start) k++;
    for (; there && k < s->pieces && !l->failed; k++) {
        split_piece *p = &s->piece[k];
        if (!p->ok || p->l.failed || !piece_take(l, p)) break;
        end = p->end;
        pieces++;
        if (!p->linked) break;
        while (k + 1 < s->pieces && !atomic_load(&s->piece[k + 1].at)) k++; /* none there */
    }
    if (pieces)
        host_detail("scene",
                    "%s: pass one shared: a second thread indexed %u of %u entities (%u of %d "
                    "pieces), from entity %u (byte %zu)",
                    l->path, l->n - first, l->n, pieces, s->pieces, first, start);
    else if (start && !there)
        host_detail("scene", "%s: byte %zu was not an entity's start: pass one went on alone",
                    l->path, start);
    for (int j = 1; j < s->pieces; j++) load_free(&s->piece[j].l);
    pthread_mutex_destroy(&s->lock);
    host_jr_free(s->r);
    free(s);
    return end;
}

/* The "entities" array (r before it). */
static bool index_entities(scene_load *l, host_jreader *r)
{
    ecs_json_reader *api = host_jr_api(r);
    if (!expect_type(l, r, host_jr_offset(r), ECS_JSON_ARRAY, "\"entities\": an array"))
        return false;
    api->begin_array(api);
    split *s = split_start(l, host_jr_offset(r));
    size_t next = s ? s->piece[1].nominal : SIZE_MAX; /* where to look again */
    size_t start = 0; /* where the second thread's pieces start, once known */
    bool ok = true;
    while (ok && api->more(api)) {
        size_t at = host_jr_offset(r);
        if (s && at >= next) {
            if (!start) start = split_reached(s, at);
            if (!start) /* its own now: the next nominal boundary */
                next = s->mine < s->pieces ? s->piece[s->mine].nominal : SIZE_MAX;
            else
                next = start; /* SIZE_MAX: none, read on to the end */
            if (at >= next) { /* arrived there, or past it */
                size_t end = split_finish(l, s, start, at == start);
                s = NULL;
                if (end && host_jr_pass_elements(r, end)) continue;
                if (end) load_fail_at(l, at, "pass one lost its place (a host bug)");
                if (l->failed) ok = false;
            }
        }
        size_t after = ok ? fast_entity(l, at) : 0;
        if (after && !host_jr_pass_elements(r, after)) /* cannot be: an element is due */
            ok = (load_fail_at(l, at, "pass one lost its place (a host bug)"), false);
        ok = ok && (after || index_entity(l, r));
    }
    if (s) split_finish(l, s, 0, false);
    return ok && !api->failed(api);
}

/* Pass one: the whole document checked and indexed (see above). On a failure the rest of
 * the text is still checked: a syntax error anywhere is the news. */
static bool index_document(scene_load *l, host_jreader *r, host_jr_mode mode)
{
    ecs_json_reader *api = host_jr_api(r);
    host_jr_start(r, l->text, l->len, 0, mode);
    size_t root_at = host_jr_offset(r), version_at = NO_POS;
    bool entities = false, ok = true;
    double version = 0;
    const char *key;
    if (!expect_type(l, r, root_at, ECS_JSON_OBJECT,
                     "an object {\"version\": 1, \"entities\": [...]}"))
        ok = false;
    else
        api->begin_object(api);
    while (ok && api->key(api, &key)) {
        size_t key_at = host_jr_last(r), value_at = host_jr_offset(r);
        if (strcmp(key, "version") == 0) {
            version_at = value_at;
            if (api->peek(api) != ECS_JSON_NUMBER || !api->number(api, &version)) {
                if (!api->failed(api))
                    load_fail_at(l, value_at, "expected \"version\": %d", HOST_SCENE_VERSION);
                ok = false;
            } else if (version != HOST_SCENE_VERSION) {
                load_fail_at(l, value_at,
                             "scene format version %g is not supported (this host reads %d)",
                             version, HOST_SCENE_VERSION);
                ok = false;
            }
        } else if (strcmp(key, "entities") == 0) {
            entities = true;
            ok = index_entities(l, r);
        } else if (!keep_value(l, UINT32_MAX, key_at, value_at) || !api->skip(api)) {
            if (!api->failed(api)) load_fail_at(l, NO_POS, "out of memory");
            ok = false;
        }
    }
    if (ok && !api->failed(api) && version_at == NO_POS)
        ok = (load_fail_at(l, root_at, "expected \"version\": %d", HOST_SCENE_VERSION), false);
    if (ok && !api->failed(api) && !entities)
        ok = (load_fail_at(l, root_at, "expected \"entities\": an array, found nothing"), false);
    host_jr_skip_rest(r);
    host_jr_finish_document(r);
    if (host_jr_error(r, NULL, NULL, NULL)) { /* the text's error comes first */
        l->failed = false;
        reader_failed(l, r);
        return false;
    }
    return ok && !l->failed;
}

/* After pass one: ids unique (the table), unknown top-level keys as trees. */
static bool check_ids(scene_load *l, host_jreader *r)
{
    l->ents = calloc((size_t)l->n + 1, sizeof *l->ents);
    if (!l->ents || (!l->captured && table_init(&l->table, l->n) != 0))
        return load_fail_at(l, NO_POS, "out of memory for %u entities", l->n), false;
    for (uint32_t i = 0; !l->captured && i < l->n; i++) {
        long other = table_find(&l->table, l->ids, l->ids[i], i);
        if (other >= 0)
            return load_fail_at(l, l->id_at[i], "duplicate id '%s' (entities[%ld] has it too)",
                                l->ids[i], other),
                   false;
    }
    for (size_t k = 0; k < l->nkept; k++) { /* unknown top-level keys come back on save */
        if (l->kept[k].entity != UINT32_MAX) continue;
        cJSON *v = keepable_tree(l, r, l->kept[k].value_at);
        host_jr_start(r, l->text, l->len, l->kept[k].key_at, HOST_JR_TRUSTED);
        const char *name = NULL;
        host_jr_api(r)->string(host_jr_api(r), &name, NULL);
        if (v && !l->extra && !(l->extra = cJSON_CreateObject())) name = NULL;
        if (!v || !name || !cJSON_AddItemToObject(l->extra, name, v)) {
            cJSON_Delete(v);
            if (!l->failed) load_fail_at(l, NO_POS, "out of memory");
            return false;
        }
    }
    return true;
}

/* A captured document's ids, read when first needed (a reference, an error). */
static bool captured_ids(scene_load *l)
{
    if (!l->captured || l->ids_read) return true;
    host_jreader *r = host_jr_new();
    for (uint32_t i = 0; r && i < l->n; i++) {
        const char *id;
        size_t n;
        host_jr_start(r, l->text, l->len, l->id_at[i], HOST_JR_TRUSTED);
        if (!host_jr_api(r)->string(host_jr_api(r), &id, &n) || !(l->ids[i] = pool_copy(l, id, n)))
            break;
        l->ids_read = i + 1 == l->n;
    }
    host_jr_free(r);
    l->ids_read = l->ids_read || l->n == 0;
    return l->ids_read;
}

/* The reader for reference depth l->depth (made when first needed). */
static host_jreader *reader_for_depth(scene_load *l)
{
    int d = l->depth;
    if (d >= l->nreaders) {
        host_jreader **v = realloc(l->readers, (size_t)(d + 1) * sizeof *v);
        if (!v) return NULL;
        l->readers = v;
        while (l->nreaders <= d) l->readers[l->nreaders++] = NULL;
    }
    if (!l->readers[d]) l->readers[d] = host_jr_new();
    return l->readers[d];
}

static bool resolve_for_reader(void *ctx, const char *id, ecs_entity *out, char *why,
                               size_t why_len);

/* Entity i's value at `at` through mgr's read_component. */
static ecs_status read_one(scene_load *l, host_manager *mgr, uint32_t i, size_t at)
{
    host_jreader *r = reader_for_depth(l);
    if (!r) return load_fail_at(l, NO_POS, "out of memory"), ECS_ERR_NO_MEMORY;
    const host_jr_token *tok = NULL;
    size_t ntok = 0; /* checked and lexed ahead: read TRUSTED with its tokens */
    bool ahead = host_ahead_get(l->ahead, (uint64_t)l->current * l->n + i, &tok, &ntok);
    host_jr_start(r, l->text, l->len, at, l->captured || ahead ? HOST_JR_TRUSTED : HOST_JR_STRICT);
    host_jr_use(r, tok, ntok);
    host_jr_on_entity(r, resolve_for_reader, l);
    if (l->edit) host_jr_refuse_unread_keys(r); /* an edit's unknown key is a typo */
    l->reads += l->text[at] == '{' || l->text[at] == '[';
    host_jreader *saved = l->reader;
    l->reader = r;
    ecs_status s;
    PLUGIN_CALL(mgr, "read_component",
                s = mgr->desc.read_component(mgr->desc.state, l->ents[i], host_jr_api(r)));
    l->reader = saved;
    if (reader_failed(l, r)) return s == ECS_OK ? ECS_ERR_BAD_VALUE : s;
    if (s == ECS_OK && !host_jr_complete(r)) {
        load_fail_at(l, at,
                     "manager '%s' returned from read_component before reading its whole "
                     "value (a plugin bug)",
                     mgr->name);
        return ECS_ERR_PLUGIN;
    }
    return s;
}

/* Entity i's value at `at` through mgr's load_component: the value as a tree. */
static ecs_status tree_one(scene_load *l, host_manager *mgr, uint32_t i, size_t at)
{
    host_jreader *r = reader_for_depth(l);
    if (!l->arena) l->arena = host_json_arena_new(4096);
    size_t end = r ? value_end(l, r, at) : at;
    host_jparse_error e = {HOST_JPARSE_OUT_OF_MEMORY, 0, 0};
    cJSON *json =
        r && l->arena ? host_jparse_keys(l->text + at, end - at, l->arena, true, &e) : NULL;
    if (!json) return value_syntax_fail(l, at, &e), ECS_ERR_BAD_VALUE;
    const cJSON *saved = l->tree;
    size_t saved_at = l->tree_at;
    l->tree = json;
    l->tree_at = at;
    ecs_status s;
    PLUGIN_CALL(mgr, "load_component",
                s = mgr->desc.load_component(mgr->desc.state, l->ents[i], json));
    l->tree = saved;
    l->tree_at = saved_at;
    if (!saved) host_json_arena_reset(l->arena); /* no tree is in use: the memory again */
    return s;
}

/* Give entity i its component of manager m, if the scene has one and it is not loaded. */
static ecs_status load_one(scene_load *l, uint32_t i, size_t m)
{
    uint8_t *st = &l->state[(size_t)i * l->managers + m];
    if (*st == 2) return ECS_OK;
    if (*st == 1) return ECS_ERR_CYCLE;
    host_manager *mgr = l->mgrs[m];
    uint64_t at1 = l->at[(size_t)i * l->managers + m];
    if (!at1) { /* none */
        *st = 2;
        return ECS_OK;
    }
    size_t at = (size_t)(at1 - 1);
    if (l->depth >= MAX_REFERENCE_DEPTH) {
        load_fail_at(l, at, "references nested more than %d deep: list parents before children",
                     MAX_REFERENCE_DEPTH);
        return ECS_ERR_BAD_VALUE;
    }
    *st = 1;
    l->fallback[0] = '\0';
    size_t saved = l->current, saved_at = l->current_at;
    l->current = m;
    l->current_at = at;
    l->depth++;
    ecs_status s = mgr->desc.read_component ? read_one(l, mgr, i, at) : tree_one(l, mgr, i, at);
    l->depth--;
    l->current = saved;
    l->current_at = saved_at;
    *st = 2;
    if (s == ECS_OK && l->failed) s = ECS_ERR_BAD_VALUE; /* it reported an error: so it is */
    if (s != ECS_OK && !l->failed && *l->fallback) load_fail_at(l, at, "%s", l->fallback);
    if (s != ECS_OK)
        load_fail_at(l, at, "manager '%s' refused it: %s", mgr->name, ecs_status_text(s));
    if (s != ECS_OK && l->bad < 0) l->bad = (long)i;
    return s;
}

/* The live entity with scene id `id` (from a scene), or named e<index>; null if none. */
static ecs_entity live_entity_named(host_scene_store *sc, const char *id)
{
    host_world *w = sc->world;
    host_scene_store *s = sc;
    for (uint32_t i = 0; i < s->cap; i++) {
        ecs_entity e = {s->entry[i].entity};
        if (s->entry[i].id && !strcmp(s->entry[i].id, id) && host_entity_alive(w->entities, e))
            return e;
    }
    char *end;
    if (id[0] != 'e' || id[1] < '0' || id[1] > '9') return ecs_entity_null();
    unsigned long idx = strtoul(id + 1, &end, 10);
    if (*end || idx > ECS_ENTITY_MAX_INDEX) return ecs_entity_null();
    ecs_entity e;
    if (!host_entities_next_live(w->entities, (uint32_t)idx, &e) || ecs_entity_index(e) != idx)
        return ecs_entity_null();
    store_entry *se = scene_entry_of(s, e);
    return se && se->id ? ecs_entity_null() : e; /* it has a scene id: that is its name */
}

ecs_status host_scene_resolve(host_scene_store *sc, const char *scene_id, ecs_entity *out)
{
    scene_load *l = sc->load;
    if (out) *out = ecs_entity_null();
    if (!l) return ECS_ERR_WRONG_TIME;
    if (!scene_id || !out) return ECS_ERR_INVALID_ARGUMENT;
    if (l->captured && !l->table.slot) { /* the first reference of a migration: the table */
        if (!captured_ids(l) || table_init(&l->table, l->n) != 0) return ECS_ERR_NO_MEMORY;
        for (uint32_t i = 0; i < l->n; i++) table_find(&l->table, l->ids, l->ids[i], i);
    }
    if (l->edit) { /* an edit of one live entity: references name live entities */
        *out = live_entity_named(l->sc, scene_id);
        if (!ecs_entity_is_null(*out)) return ECS_OK;
        host_format(l->fallback, sizeof l->fallback, "reference to an unknown id '%s'", scene_id);
        return ECS_ERR_NOT_FOUND;
    }
    long j = (long)l->last_ref - 1; /* children often share a parent: the last id first */
    if (j < 0 || strcmp(l->ids[j], scene_id) != 0) j = table_find(&l->table, l->ids, scene_id, -1);
    if (j >= 0) l->last_ref = (uint32_t)j + 1;
    if (j < 0) { /* the plugin may point at the exact value: this is the fallback */
        host_format(l->fallback, sizeof l->fallback, "reference to an unknown id '%s'", scene_id);
        return ECS_ERR_NOT_FOUND;
    }
    uint8_t st = l->state[(size_t)j * l->managers + l->current];
    if (st == 1) {
        host_format(l->fallback, sizeof l->fallback,
                    "reference cycle: '%s' refers (through its %s) back to itself", scene_id,
                    l->mgrs[l->current]->name);
        return ECS_ERR_CYCLE;
    }
    ecs_status s = load_one(l, (uint32_t)j, l->current);
    if (s != ECS_OK) return s;
    *out = l->ents[j];
    return ECS_OK;
}

static bool resolve_for_reader(void *ctx, const char *id, ecs_entity *out, char *why,
                               size_t why_len)
{
    scene_load *l = ctx;
    ecs_status s = host_scene_resolve(l->sc, id, out);
    if (s == ECS_OK) return true;
    host_format(why, why_len, "%s", *l->fallback ? l->fallback : ecs_status_text(s));
    return false;
}

void host_scene_error(host_scene_store *sc, const cJSON *at, const char *message)
{
    scene_load *l = sc->load;
    if (!l) {
        host_error("scene", "%s", message);
        return;
    }
    if (l->reader) { /* a read_component: at the value it read last */
        ecs_json_reader *api = host_jr_api(l->reader);
        api->error(api, "%s", *l->fallback ? l->fallback : message);
        return;
    }
    size_t off = l->current_at;
    const char *found = at && l->tree
                            ? host_json_find(l->text + l->tree_at, l->len - l->tree_at, l->tree, at)
                            : NULL;
    if (found) off = (size_t)(found - l->text);
    load_fail_at(l, at ? off : NO_POS, "%s", *l->fallback ? l->fallback : message);
}

/* The members of from (a scene's "plugins", in extra) into to (the store's), replacing a
 * member of the same name. */
static void merge_states(cJSON *to, cJSON *extra, cJSON *from)
{
    from = cJSON_DetachItemViaPointer(extra, from);
    for (cJSON *m = from->child, *next; m; m = next) {
        next = m->next;
        cJSON_DeleteItemFromObjectCaseSensitive(to, m->string);
        cJSON_AddItemToObject(to, m->string, cJSON_DetachItemViaPointer(from, m));
    }
    cJSON_Delete(from);
}

/* Make the load permanent: ids and kept JSON into the store, top-level extras. */
static bool commit_load(scene_load *l)
{
    host_scene_store *s = l->sc;
    cJSON **kept = calloc(l->n + 1, sizeof *kept);
    host_jreader *r = host_jr_new();
    bool ok = kept && r;
    for (size_t k = 0; ok && k < l->nkept; k++) { /* components no loaded manager takes */
        kept_value *v = &l->kept[k];
        if (v->entity == UINT32_MAX) continue;
        cJSON *tree = keepable_tree(l, r, v->value_at);
        const char *name = NULL;
        host_jr_start(r, l->text, l->len, v->key_at, HOST_JR_TRUSTED);
        host_jr_api(r)->string(host_jr_api(r), &name, NULL);
        if (tree && !kept[v->entity] && !(kept[v->entity] = cJSON_CreateObject())) name = NULL;
        if (!tree || !name || !cJSON_AddItemToObject(kept[v->entity], name, tree)) {
            cJSON_Delete(tree);
            ok = false;
        }
    }
    host_jr_free(r);
    size_t bytes = 0, *lens = ok ? malloc(((size_t)l->n + 1) * sizeof *lens) : NULL;
    uint32_t top = 0; /* the highest index: the store grown once */
    for (uint32_t i = 0; lens && i < l->n; i++) {
        bytes += scene_id_room(lens[i] = strlen(l->ids[i]));
        if (ecs_entity_index(l->ents[i]) > top) top = ecs_entity_index(l->ents[i]);
    }
    if (l->n && scene_store_reserve(s, top) != 0) ok = false;
    char *put = NULL;
    id_chunk *chunk = lens && l->n ? scene_id_chunk_new(bytes, &put) : NULL;
    ok = ok && lens && (chunk || !l->n);
    for (uint32_t i = 0; ok && i < l->n; i++) {
        store_entry *e = &s->entry[ecs_entity_index(l->ents[i])];
        scene_entry_clear(e);
        *e = (store_entry){l->ents[i].id, scene_id_put(chunk, &put, l->ids[i], lens[i]), kept[i],
                           ++s->next_seq};
        kept[i] = NULL;
    }
    if (chunk && !chunk->live) free(chunk); /* none stored */
    free(lens);
    for (uint32_t i = 0; kept && i < l->n; i++) cJSON_Delete(kept[i]);
    free(kept);
    if (!ok) return load_fail_at(l, NO_POS, "out of memory keeping components"), false;
    for (cJSON *c = l->extra ? l->extra->child : NULL, *next; c; c = next) {
        next = c->next; /* unknown top-level keys come back on save */
        if (!s->extra) s->extra = cJSON_CreateObject();
        cJSON *had = s->extra ? cJSON_GetObjectItemCaseSensitive(s->extra, c->string) : NULL;
        if (had && cJSON_IsObject(had) && !strcmp(c->string, HOST_PSTATE_KEY))
            merge_states(had, l->extra, c); /* states of plugins away: the newest kept */
        else if (s->extra && !had)
            cJSON_AddItemToObject(s->extra, c->string, cJSON_DetachItemViaPointer(l->extra, c));
    }
    return true;
}

/* Hand every entity its components through l->mgrs, with references resolved. */
typedef struct components_call {
    scene_load *l;
    ecs_status status;
} components_call;

#define PREFETCH_VALUES 8 /* how far ahead of its read the loader asks for a value's text */

static void call_components(void *arg)
{
    components_call *c = arg;
    scene_load *l = c->l;
    c->status = ECS_OK;
    for (size_t m = 0; m < l->managers && c->status == ECS_OK; m++) {
        uint64_t t0 = host_now_ns();
        for (uint32_t i = 0; i < l->n && c->status == ECS_OK; i++) {
            host_ahead_at(l->ahead, (uint64_t)m * l->n + i);
            if (i + PREFETCH_VALUES < l->n) /* a value soon: its text from memory meanwhile */
                host_ahead_prefetch(l->text,
                                    l->at[(size_t)(i + PREFETCH_VALUES) * l->managers + m]);
            c->status = load_one(l, i, m);
        }
        l->per[m].ns = host_now_ns() - t0;
    }
}

/* Each manager with a reserve callback told how many of its components come (l->per);
 * l->current says whose call it is. */
static void call_reserve(void *arg)
{
    scene_load *l = ((components_call *)arg)->l;
    for (size_t m = 0; m < l->managers; m++) {
        if (!l->mgrs[m]->desc.reserve || !l->per[m].count) continue;
        l->current = m;
        PLUGIN_CALL(l->mgrs[m], "reserve",
                    l->mgrs[m]->desc.reserve(l->mgrs[m]->desc.state, l->per[m].count));
    }
}

/* A second thread to lex pass two's values ahead (ahead.h) for a large document's
 * read_component managers. */
static void start_ahead(scene_load *l)
{
    if (l->captured || l->edit || l->len < SPLIT_BYTES) return;
    bool *want = malloc(l->managers + 1), any = false;
    for (size_t m = 0; want && m < l->managers; m++)
        any |= want[m] = l->mgrs[m]->desc.read_component;
    if (any) l->ahead = host_ahead_start(l->text, l->len, l->at, l->n, l->managers, want);
    free(want);
}

static void stop_ahead(scene_load *l)
{
    if (!l->ahead) return;
    uint64_t taken;
    host_ahead_stop(l->ahead, &taken);
    l->ahead = NULL;
    if (l->reads) /* pass two ran (the thread starts before the ids are checked) */
        host_detail("scene",
                    "%s: pass two: %llu of %llu objects and arrays lexed ahead by a second thread",
                    l->path, (unsigned long long)taken, (unsigned long long)l->reads);
}

/* Hand every entity its components through l->mgrs, under the crash guard (--safe): a
 * manager that crashes fails the load cleanly, its signal in *crashed (0 otherwise) and
 * the callback it crashed in in *where. */
static ecs_status load_components(scene_load *l, int *crashed, const char **where)
{
    *crashed = 0;
    *where = "reserve";
    size_t states = (size_t)l->n * (l->managers ? l->managers : 1) + 1;
    l->state = calloc(states, 1); /* (a malloc + memset here was compiled as this call) */
    l->per = calloc(l->managers + 1, sizeof *l->per);
    if (!l->state || !l->per) return load_fail_at(l, NO_POS, "out of memory"), ECS_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < l->n; i++) /* each manager's values: l->at row by row */
        for (size_t m = 0; m < l->managers; m++) l->per[m].count += l->at[i * l->managers + m] != 0;
    components_call c = {l, ECS_OK};
    l->current_at = NO_POS;
    int sig = host_world_guard(l->w, NULL, call_reserve,
                               &c); /* before the load: no scene_resolve there */
    if (sig) {
        *crashed = sig;
        load_fail_at(l, NO_POS, "manager '%s' crashed with %s in reserve()",
                     l->mgrs[l->current]->name, host_signame(sig));
        return ECS_ERR_PLUGIN;
    }
    l->sc->load = l;
    sig = host_world_guard(l->w, NULL, call_components, &c);
    l->sc->load = NULL; /* also after a crash: this context dies with the call */
    l->reader = NULL;
    l->tree = NULL;
    if (!sig) return c.status;
    *crashed = sig;
    *where = l->mgrs[l->current]->desc.read_component ? "read_component" : "load_component";
    l->failed = false; /* the crash is the news, not what was said before it */
    load_fail_at(l, l->current_at, "manager '%s' crashed with %s", l->mgrs[l->current]->name,
                 host_signame(sig));
    return ECS_ERR_PLUGIN;
}

/* Pass one over l->text with l->mgrs: the document checked, indexed and its ids. For a
 * large load (not a capture, not an edit) the read-ahead thread starts here: whoever
 * calls this stops it (stop_ahead) before the text goes. */
static bool prepare(scene_load *l)
{
    host_jreader *r = host_jr_new();
    if (!r) return load_fail_at(l, NO_POS, "out of memory"), false;
    host_jr_mode mode = l->captured ? HOST_JR_TRUSTED : HOST_JR_SKIM;
    bool ok = index_document(l, r, mode);
    if (!ok && mode == HOST_JR_SKIM) { /* the first error in the text, wherever it is */
        l->failed = false;
        l->n = 0;
        l->nkept = 0;
        cJSON_Delete(l->extra);
        l->extra = NULL;
        ok = index_document(l, r, HOST_JR_STRICT); /* its word is the last */
    }
    if (ok) start_ahead(l); /* it lexes while this thread checks ids and creates entities */
    ok = ok && check_ids(l, r);
    host_jr_free(r);
    return ok;
}

/* Where the value of the top-level key "plugins" starts in the text, or NO_POS. */
static size_t states_at(scene_load *l, host_jreader *r)
{
    for (size_t k = 0; k < l->nkept; k++) {
        const char *name = NULL;
        if (l->kept[k].entity != UINT32_MAX) continue;
        host_jr_start(r, l->text, l->len, l->kept[k].key_at, HOST_JR_TRUSTED);
        if (host_jr_api(r)->string(host_jr_api(r), &name, NULL) && !strcmp(name, HOST_PSTATE_KEY))
            return l->kept[k].value_at;
    }
    return NO_POS;
}

/* A loaded plugin of the scene's "plugins" object, whose value starts at `at`. */
typedef struct state_read {
    void *p; /* its holder (host_scene_states) */
    size_t at;
    char *before; /* what it wrote before reading the scene's: put back on a failure */
    size_t before_len;
} state_read;

/* The plugins of "plugins" that are loaded and offer their state, into *out (*n of them).
 * False when the value is not an object of values (the load failed) or memory ran out. */
static bool states_to_read(scene_load *l, host_jreader *r, size_t at, state_read **out, size_t *n)
{
    ecs_json_reader *api = host_jr_api(r);
    const char *key;
    host_jr_start(r, l->text, l->len, at, HOST_JR_STRICT);
    if (api->peek(api) != ECS_JSON_OBJECT)
        return load_fail_at(l, at, "expected an object of plugin states by plugin name, found %s",
                            host_jr_type_name(api->peek(api))),
               false;
    api->begin_object(api);
    while (api->key(api, &key)) {
        const host_scene_states *st = &l->sc->states;
        void *p = st->named ? st->named(st->ctx, key) : NULL;
        if (!api->skip(api) || !p) continue;
        state_read *v = realloc(*out, (*n + 1) * sizeof *v);
        if (!v) return load_fail_at(l, NO_POS, "out of memory"), false;
        *out = v;
        v[(*n)++] = (state_read){p, host_jr_last(r), NULL, 0};
    }
    return !reader_failed(l, r);
}

/* Put back the states of v[0..n), read from the scene, as they were before. */
static void states_put_back(const host_scene_states *st, const state_read *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t err_at;
        char why[300];
        if (v[i].before_len && st->read(v[i].p, v[i].before, v[i].before_len, 0, &err_at, NULL, why,
                                        sizeof why) != ECS_OK)
            host_warn("scene", "%s: its plugin state could not be put back: %s", st->name(v[i].p),
                      why);
    }
}

/* After every component loaded: each loaded plugin that offers its own state reads its
 * member of the top-level "plugins" object (the others stay kept, written back on save).
 * All or nothing, like the components: when one fails, those read before it get back what
 * they wrote just before, and the load fails at the value. The members read are dropped
 * from the kept object: the plugins hold them now. */
static ecs_status load_states(scene_load *l)
{
    host_jreader *r = l->edit || l->captured ? NULL : host_jr_new();
    size_t at = r ? states_at(l, r) : NO_POS, n = 0, i = 0, err_at = 0;
    state_read *v = NULL;
    const host_scene_states *st = &l->sc->states;
    bool ok = at == NO_POS || states_to_read(l, r, at, &v, &n);
    char why[400] = "";
    for (; ok && i < n; i++) { /* what each held, in case a later one fails */
        v[i].before = st->text(v[i].p, &v[i].before_len, why, sizeof why);
        if (!v[i].before)
            ok = (load_fail_at(l, v[i].at, "plugin '%s': %s", st->name(v[i].p), why), false);
    }
    for (i = 0; ok && i < n; i++) {
        int sig = 0;
        if (st->read(v[i].p, l->text, l->len, v[i].at, &err_at, &sig, why, sizeof why) == ECS_OK)
            continue;
        load_fail_at(l, err_at, "plugin '%s' refused its state: %s", st->name(v[i].p), why);
        if (sig) host_world_crashed(l->w, v[i].p, sig, "read of its plugin state");
        states_put_back(st, v, i); /* the one that refused left its own as it was */
        ok = false;
    }
    cJSON *kept =
        ok && l->extra ? cJSON_GetObjectItemCaseSensitive(l->extra, HOST_PSTATE_KEY) : NULL;
    for (i = 0; i < n; i++) {
        if (kept) cJSON_DeleteItemFromObjectCaseSensitive(kept, st->name(v[i].p));
        free(v[i].before);
    }
    if (kept && !kept->child) cJSON_DeleteItemFromObjectCaseSensitive(l->extra, HOST_PSTATE_KEY);
    free(v);
    host_jr_free(r);
    return ok ? ECS_OK : ECS_ERR_BAD_VALUE;
}

static ecs_status run_load(scene_load *l)
{
    l->mgrs = l->w->managers;
    l->managers = l->w->manager_count;
    uint64_t t = host_now_ns(), now;
    if (!prepare(l)) return stop_ahead(l), ECS_ERR_BAD_VALUE;
    l->pass_ns = (now = host_now_ns()) - t;
    t = now;
    if (host_entity_create_many(l->w->entities, l->ents, l->n) != ECS_OK) {
        stop_ahead(l);
        memset(l->ents, 0, l->n * sizeof *l->ents); /* nothing to roll back */
        return load_fail_at(l, NO_POS, "%u entities do not fit: too many entities alive", l->n),
               ECS_ERR_FULL;
    }
    int crashed = 0;
    const char *where;
    l->create_ns = (now = host_now_ns()) - t;
    t = now;
    ecs_status s = load_components(l, &crashed, &where);
    stop_ahead(l);
    l->components_ns = (now = host_now_ns()) - t;
    t = now;
    if (crashed) /* its state is suspect: roll it back or unload it after this frame */
        host_world_crashed(l->w, l->mgrs[l->current]->owner, crashed, where);
    if (s == ECS_OK) s = load_states(l); /* the plugins' own, after their components */
    if (s == ECS_OK && !commit_load(l)) s = ECS_ERR_NO_MEMORY;
    l->store_ns = host_now_ns() - t;
    if (s != ECS_OK) { /* all or nothing: the managers hear of the entities' end at once */
        host_entity_destroy_many(l->w->entities, l->ents, l->n, NULL);
        host_world_announce_destroyed(l->w);
    }
    return s;
}

static void load_free(scene_load *l)
{
    free(l->ids);
    free(l->id_at);
    free(l->at);
    free(l->kept);
    cJSON_Delete(l->extra);
    for (id_block *b = l->pool, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(l->ents);
    free(l->table.slot);
    free(l->state);
    free(l->per);
    for (int d = 0; d < l->nreaders; d++) host_jr_free(l->readers[d]);
    free(l->readers);
    host_json_arena_free(l->arena);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The -v line of a load: how long each step took, and each manager that loaded components
 * ("transform 100000 in 24.1"), ms. */
static void steps_detail(const scene_load *l)
{
    char mgrs[400] = "";
    size_t n = 0;
    for (size_t m = 0; l->per && m < l->managers && n < sizeof mgrs; m++)
        if (l->per[m].count)
            n += (size_t)snprintf(mgrs + n, sizeof mgrs - n, "%s%s %u in %.1f", n ? ", " : "",
                                  l->mgrs[m]->name, l->per[m].count, (double)l->per[m].ns * 1e-6);
    host_detail(
        "scene", "%s: read %.1f ms, pass one %.1f, create %.1f, components %.1f (%s), store %.1f",
        l->path, (double)l->read_ns * 1e-6, (double)l->pass_ns * 1e-6, (double)l->create_ns * 1e-6,
        (double)l->components_ns * 1e-6, *mgrs ? mgrs : "none", (double)l->store_ns * 1e-6);
}

/* Load a scene file, or (text != NULL) the document text[0..len) named path: the error in
 * error (logged when log), the first entity made in *first (may be NULL). */
static ecs_status load_scene(host_scene_store *sc, const char *path, const char *given, size_t len,
                             bool log, ecs_entity *first, char *error, size_t errlen)
{
    host_world *w = sc->world;
    scene_load l = {.sc = sc, .w = w, .path = path, .bad = -1, .lines = true};
    uint64_t t0 = host_now_ns();
    char *text = NULL;
    ecs_status s = ECS_ERR_BAD_VALUE;
    if (given) { /* the inspector's: references name live entities too */
        l.text = given;
        l.len = len;
        l.edit = true;
    } else if (has_suffix(path, ".gltf") || has_suffix(path, ".glb")) {
        cJSON *root = host_gltf_import(path, l.error, sizeof l.error);
        l.text = text = root ? host_json_print(root, &l.len) : NULL;
        l.lines = false; /* the text is made: its lines are nobody's */
        if (root && !text) host_format(l.error, sizeof l.error, "%s: out of memory", path);
        cJSON_Delete(root);
    } else {
        l.text = text = host_json_read_text(path, &l.len, l.error, sizeof l.error);
    }
    l.read_ns = host_now_ns() - t0;
    if (l.text) s = run_load(&l);
    if (s != ECS_OK && log)
        host_error("scene", "%s", l.error);
    else if (s == ECS_OK)
        host_info("scene", "loaded %u entities from %s in %.1f ms", l.n, path,
                  (double)(host_now_ns() - t0) * 1e-6);
    if (s == ECS_OK && !l.edit) steps_detail(&l);
    if (s != ECS_OK && error) host_format(error, errlen, "%s", l.error);
    if (s == ECS_OK && first && l.n) *first = l.ents[0];
    free(text);
    load_free(&l);
    return s;
}

ecs_status host_scene_load(host_scene_store *sc, const char *path)
{
    return load_scene(sc, path, NULL, 0, true, NULL, NULL, 0);
}

ecs_status host_scene_load_text(host_scene_store *sc, const char *name, const char *text,
                                size_t len, ecs_entity *first, char *error, size_t errlen)
{
    return load_scene(sc, name, text, len, false, first, error, errlen);
}

/* ---- saving ---- */

typedef struct save_edge {
    uint32_t from; /* position of the entity whose save asked */
    ecs_entity to; /* the entity it refers to */
} save_edge;

typedef struct scene_save {
    host_scene_store *sc; /* the store it saves from (its world: w) */
    host_world *w;
    uint32_t saving; /* position of the entity being saved, UINT32_MAX between entities */
    ecs_entity saving_entity;
    save_edge *edges; /* references seen while saving: referenced entities go first */
    uint32_t edge_count, edge_cap;
    char **made; /* by entity index: ids made during this save (in strings), or NULL */
    struct str_block *strings;
    uint8_t *written; /* by entity index: its object is in the document */
    uint32_t cap;
    const char **used; /* every id handed out, for uniqueness */
    uint32_t used_count, used_cap;
    id_table table;
    ecs_entity *referenced; /* entities whose id was asked for */
    uint32_t ref_count, ref_cap;
    bool failed;
    bool forward; /* an entity referred to one not saved yet: the order may change */
    /* a scene id of the save looks like a made one (e<index>, e<index>_<k>): made ids must
     * be checked against the table. Else they cannot collide (one per index), and a million
     * entities without scene ids skip two million table lookups. */
    bool index_ids_taken;
    host_manager *current;  /* the manager writing now: named when its code crashes */
    struct order_key *keys; /* capture's order and positions, freed with the rest, */
    uint32_t *pos_of;       /* also after a crash left capture mid-way */
} scene_save;

/* Does id look like an id the save makes from an index: e<digits>, or e<digits>_<digits>? */
static bool looks_like_index_id(const char *id)
{
    if (id[0] != 'e' || id[1] < '0' || id[1] > '9') return false;
    const char *p = id + 1;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '_' && p[1] >= '0' && p[1] <= '9')
        for (p++; *p >= '0' && *p <= '9'; p++) {
        }
    return *p == '\0';
}

static bool id_used(scene_save *v, const char *id)
{
    return table_find(&v->table, v->used, id, -1) >= 0;
}

static bool use_id(scene_save *v, const char *id)
{
    if (v->used_count == v->used_cap || (v->used_count + 1) * 2 > v->table.mask) {
        uint32_t cap = v->used_cap ? v->used_cap * 2 : 1024;
        const char **u = realloc(v->used, cap * sizeof *u);
        if (!u) return false;
        v->used = u;
        v->used_cap = cap;
        free(v->table.slot);
        if (table_init(&v->table, cap) != 0) return false;
        for (uint32_t i = 0; i < v->used_count; i++) table_find(&v->table, v->used, v->used[i], i);
    }
    v->used[v->used_count] = id;
    table_find(&v->table, v->used, id, v->used_count);
    v->used_count++;
    return true;
}

/* Make room for entity index idx in the per-index arrays. -1 when memory ran out. */
static int made_reserve(scene_save *v, uint32_t idx)
{
    if (idx < v->cap) return 0;
    uint32_t cap = v->cap ? v->cap : 1024;
    while (cap <= idx) cap *= 2;
    char **m = realloc(v->made, cap * sizeof *m);
    if (m) v->made = m;
    uint8_t *wr = m ? realloc(v->written, cap) : NULL;
    if (!wr) return -1;
    memset(m + v->cap, 0, (cap - v->cap) * sizeof *m);
    memset(wr + v->cap, 0, cap - v->cap);
    v->written = wr;
    v->cap = cap;
    return 0;
}

/* Record that the entity being saved refers to e. */
static void edge_add(scene_save *v, ecs_entity e)
{
    if (v->saving == UINT32_MAX || e.id == v->saving_entity.id) return;
    uint32_t idx = ecs_entity_index(e);
    if (idx >= v->cap || !v->written[idx]) v->forward = true;
    if (v->edge_count == v->edge_cap) {
        uint32_t cap = v->edge_cap ? v->edge_cap * 2 : 1024;
        save_edge *g = realloc(v->edges, cap * sizeof *g);
        if (!g) {
            v->failed = true;
            return;
        }
        v->edges = g;
        v->edge_cap = cap;
    }
    v->edges[v->edge_count++] = (save_edge){v->saving, e};
}

/* Strings made during a save, freed together: blocks of 64 KiB (or one string's size). */
typedef struct str_block {
    struct str_block *next;
    size_t used, cap;
    char data[];
} str_block;

static char *save_strdup(scene_save *v, const char *str, size_t n)
{
    str_block *b = v->strings;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > 65536 ? n + 1 : 65536;
        if (!(b = malloc(sizeof *b + cap))) return NULL;
        *b = (str_block){v->strings, 0, cap};
        v->strings = b;
    }
    char *out = memcpy(b->data + b->used, str, n);
    out[n] = '\0';
    b->used += n + 1;
    return out;
}

/* A unique id made from base ("e<index>", or a scene id seen twice) into v->made[idx]. */
static const char *make_id(scene_save *v, uint32_t idx, const char *base, bool index_id)
{
    char id[300];
    const char *pick = base;
    if (index_id && !v->index_ids_taken) { /* e<idx>: nothing else can be called that */
        if (!(v->made[idx] = save_strdup(v, base, strlen(base)))) return v->failed = true, NULL;
        return v->made[idx];
    }
    for (unsigned k = 2; id_used(v, pick); k++) {
        host_format(id, sizeof id, "%s_%u", base, k);
        pick = id;
    }
    if (!(v->made[idx] = save_strdup(v, pick, strlen(pick))) || !use_id(v, v->made[idx]))
        return v->failed = true, NULL;
    return v->made[idx];
}

/* "e<index>" into out (16 bytes). */
static void index_id(char *out, uint32_t idx)
{
    char d[12];
    int n = 0;
    do d[n++] = (char)('0' + idx % 10);
    while (idx /= 10);
    *out++ = 'e';
    while (n) *out++ = d[--n];
    *out = '\0';
}

const char *host_scene_id_of(host_scene_store *sc, ecs_entity e)
{
    host_world *w = sc->world;
    scene_save *v = sc->save;
    if (!v || !host_entity_alive(w->entities, e)) return NULL;
    uint32_t idx = ecs_entity_index(e);
    if (made_reserve(v, idx) != 0) return v->failed = true, NULL;
    edge_add(v, e);
    if (v->made[idx]) return v->made[idx];
    store_entry *se = scene_entry_of(sc, e);
    if (se && se->id) return se->id;
    char base[16];
    index_id(base, idx);
    if (!make_id(v, idx, base, true)) return NULL;
    if (v->ref_count == v->ref_cap) {
        uint32_t cap = v->ref_cap ? v->ref_cap * 2 : 256;
        ecs_entity *r = realloc(v->referenced, cap * sizeof *r);
        if (!r) return v->failed = true, NULL;
        v->referenced = r;
        v->ref_cap = cap;
    }
    v->referenced[v->ref_count++] = e;
    return v->made[idx];
}

/* The writer's entity(): the scene id of e in the save under way. */
static const char *id_of_for_writer(void *ctx, ecs_entity e)
{
    return host_scene_id_of(ctx, e);
}

#define ENTITY_TABS 3 /* an entity's members: root object > "entities" array > entity */

/* The text being captured: every saved entity's object, one after another in jw, each
 * after ", " (the separator of the entities array); frag[i] is where the object of
 * ents[i] is. While they are in order the whole list is one piece of text. */
typedef struct frag {
    size_t start, len;
} frag;

typedef struct capture {
    host_jwriter jw;
    frag *frags;
    ecs_entity *ents;
    uint32_t n, cap;
    uint8_t *wrote; /* per manager: it wrote the entity being saved */
    /* record (a migration's capture): where in jw each object's id and each manager's
     * value start, so that the restore need not read the text to find them */
    bool record;
    size_t managers;
    uint64_t *at;  /* n x managers: offset + 1 of the value, 0: none */
    size_t *id_at; /* n: offset of the id's string */
    uint64_t *row; /* the object being written: its managers' offsets + 1 */
    size_t row_id; /* and its id's */
    /* a save streams its text to the file while the order cannot change (no entity
     * referred to one not saved yet, see order_references): the writer then holds only
     * the objects from frags[flushed] on, ", " first, and its memory is reused */
    struct savefile *stream;
    uint32_t flushed; /* objects already in the file */
} capture;

static bool capture_add(capture *c, size_t start, ecs_entity e)
{
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 1024;
        ecs_entity *v = realloc(c->ents, cap * sizeof *v);
        if (v) c->ents = v;
        frag *f = v ? realloc(c->frags, cap * sizeof *f) : NULL;
        if (f) c->frags = f;
        if (f && c->record) {
            uint64_t *at = realloc(c->at, (size_t)cap * (c->managers + 1) * sizeof *at);
            if (at) c->at = at;
            size_t *id_at = at ? realloc(c->id_at, cap * sizeof *id_at) : NULL;
            if (!id_at) return false;
            c->id_at = id_at;
        }
        if (!f) return false;
        c->cap = cap;
    }
    if (c->record) {
        memcpy(&c->at[(size_t)c->n * c->managers], c->row, c->managers * sizeof *c->row);
        c->id_at[c->n] = c->row_id;
    }
    c->frags[c->n] = (frag){start, c->jw.len - start};
    c->ents[c->n++] = e;
    return true;
}

/* ",\n\t\t\t"name":\t": an entity member after the id. */
static void member_key(host_jwriter *jw, const char *name)
{
    host_jw_key(jw, true, ENTITY_TABS, name);
}

/* One manager's value of e (scene id `id`) as the member `name`; nothing when e has no
 * component. A failure is logged naming the plugin, the manager and the entity. */
static bool save_member(host_world *w, host_jwriter *jw, host_manager *mgr, ecs_entity e,
                        const char *id, bool *wrote, size_t *value_at)
{
    size_t mark = jw->len;
    member_key(jw, mgr->name);
    size_t value = *value_at = jw->len;
    const char *bad = NULL;
    ecs_status s;
    host_jw_start(jw, ENTITY_TABS);
    if (mgr->desc.write_component) {
        PLUGIN_CALL(mgr, "write_component",
                    s = mgr->desc.write_component(mgr->desc.state, e, &jw->api));
    } else {
        cJSON *out = NULL;
        PLUGIN_CALL(mgr, "save_component", s = mgr->desc.save_component(mgr->desc.state, e, &out));
        if (s == ECS_OK && out) jw->api.value(&jw->api, out);
        cJSON_Delete(out);
    }
    if (s == ECS_OK && !host_jw_finish(jw)) bad = jw->error;
    *wrote = s == ECS_OK && !bad && jw->len != value;
    if (!*wrote) jw->len = mark;
    if (s != ECS_OK || bad)
        host_error("scene", "plugin '%s', manager '%s' %s entity '%s' (#%u.%u): %s",
                   host_world_owner_name(w, mgr->owner), mgr->name,
                   bad ? "wrote invalid JSON for" : "could not save", id, ecs_entity_index(e),
                   ecs_entity_generation(e), bad ? bad : ecs_status_text(s));
    return s == ECS_OK && !bad;
}

/* The id host_scene_id_of(e) would give, without taking it: e's made or stored id, or
 * the one make_id would make (into buf). */
static const char *guess_id(scene_save *v, ecs_entity e, char *buf, size_t len)
{
    uint32_t idx = ecs_entity_index(e);
    if (idx < v->cap && v->made[idx]) return v->made[idx];
    store_entry *se = scene_entry_of(v->sc, e);
    if (se && se->id) return se->id;
    char base[16];
    index_id(base, idx);
    memcpy(buf, base, sizeof base);
    for (unsigned k = 2; v->index_ids_taken && id_used(v, buf); k++)
        host_format(buf, len, "%s_%u", base, k);
    return buf;
}

/* Append the JSON object of e to c: id first, managers in registration order, then kept
 * components. Nothing when e has nothing to save. False when a manager failed or memory
 * ran out. */
static bool save_entity(scene_save *v, capture *c, host_manager *const *mgrs, size_t count,
                        bool with_kept, ecs_entity e)
{
    host_world *w = v->w;
    host_jwriter *jw = &c->jw;
    store_entry *se = with_kept ? scene_entry_of(v->sc, e) : NULL;
    size_t begin = jw->len;
    bool any = false, ok = true;
    char guess[300]; /* the id it will have if it is written: the id member comes first */
    const char *id = guess_id(v, e, guess, sizeof guess);
    host_jw_raw(jw, ", {", 3);
    host_jw_key(jw, false, ENTITY_TABS, "id");
    c->row_id = jw->len;
    host_jw_quoted(jw, id);
    for (size_t m = 0; m < count; m++) {
        c->wrote[m] = 0;
        bool wrote = false;
        size_t value_at = 0;
        if (host_manager_saves(mgrs[m]) && (v->current = mgrs[m]))
            ok = save_member(w, jw, mgrs[m], e, id, &wrote, &value_at) && ok;
        c->wrote[m] = wrote;
        if (c->record) c->row[m] = wrote ? value_at + 1 : 0;
        any = any || wrote;
    }
    const cJSON *k, *kept = se ? se->kept : NULL;
    cJSON_ArrayForEach(k, kept)
    {
        bool loaded = false; /* a loaded manager that wrote its component wins */
        for (size_t m = 0; m < count && !loaded; m++)
            loaded = c->wrote[m] && !strcmp(mgrs[m]->name, k->string);
        if (loaded) continue;
        member_key(jw, k->string);
        host_jw_start(jw, ENTITY_TABS);
        jw->api.value(&jw->api, k);
        ok = host_jw_finish(jw) && ok;
        any = true;
    }
    if (!ok || (!any && !(se && se->id))) { /* failed, or nothing but the id */
        jw->len = begin;
        return ok;
    }
    const char *real = host_scene_id_of(v->sc, e); /* now it is taken */
    if (!real || jw->no_memory) {
        jw->len = begin;
        return false;
    }
    if (strcmp(real, id) != 0) { /* cannot happen: the guess makes what make_id makes */
        host_error("scene", "entity #%u.%u: its id changed while it was saved ('%s', '%s')",
                   ecs_entity_index(e), ecs_entity_generation(e), id, real);
        jw->len = begin;
        return false;
    }
    host_jw_newline(jw, ENTITY_TABS - 1);
    host_jw_raw(jw, "}", 1);
    return !jw->no_memory && capture_add(c, begin + 2, e);
}

static void saved_mark(scene_save *v, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    if (idx < v->cap) v->written[idx] = 1;
}

/* Capture every live entity with a component of mgrs (with_kept: or kept JSON, or a scene
 * id) into a new document. False when a manager failed or memory ran out. */
typedef struct order_key {
    uint64_t seq; /* load sequence; UINT64_MAX for entities made at run time */
    uint32_t index;
    ecs_entity e;
} order_key;

static int cmp_order(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The live entities in the save's base order: as loaded (file order), then the ones made
 * at run time by index. Index order alone would change after indices are reused. */
static order_key *base_order(host_scene_store *sc, uint32_t *n)
{
    host_world *w = sc->world;
    uint32_t cap = host_entities_live(w->entities) + 1, k = 0;
    order_key *keys = malloc(cap * sizeof *keys);
    ecs_entity e;
    for (uint32_t i = 1; keys && k < cap && host_entities_next_live(w->entities, i, &e);
         i = ecs_entity_index(e) + 1) {
        store_entry *se = scene_entry_of(sc, e);
        keys[k++] = (order_key){se && se->seq ? se->seq : UINT64_MAX, ecs_entity_index(e), e};
    }
    bool sorted = true; /* often: entities loaded in index order, or none loaded */
    for (uint32_t i = 1; keys && sorted && i < k; i++)
        sorted = cmp_order(&keys[i - 1], &keys[i]) < 0;
    if (keys && !sorted) qsort(keys, k, sizeof *keys, cmp_order);
    *n = k;
    return keys;
}

/* Reorder the captured entities so that every referenced entity comes before the ones
 * referring to it (depth-first post-order from the base order; iterative, so any depth
 * works). A file saved so loads with no reference nested. */
static bool order_references(scene_save *v, capture *c, uint32_t *pos_of)
{
    uint32_t n = c->n;
    uint32_t *off = calloc(n + 1, sizeof *off), *to = malloc((v->edge_count + 1) * sizeof *to);
    uint32_t *out = malloc((n + 1) * sizeof *out), *stack = malloc((n + 1) * sizeof *stack);
    uint32_t *cursor = calloc(n + 1, sizeof *cursor);
    uint8_t *state = calloc(n + 1, 1);
    ecs_entity *ents = malloc((n + 1) * sizeof *ents);
    bool ok = off && to && out && stack && cursor && state && ents;
    for (uint32_t i = 0; ok && i < v->edge_count; i++) off[v->edges[i].from + 1]++;
    for (uint32_t i = 0; ok && i < n; i++) off[i + 1] += off[i];
    for (uint32_t i = 0; ok && i < v->edge_count; i++) { /* targets that were saved */
        ecs_entity t = v->edges[i].to;
        uint32_t p = pos_of[ecs_entity_index(t)];
        to[cursor[v->edges[i].from]++ + off[v->edges[i].from]] =
            p && c->ents[p - 1].id == t.id ? p - 1 : UINT32_MAX;
    }
    if (ok) memset(cursor, 0, (n + 1) * sizeof *cursor);
    uint32_t k = 0;
    for (uint32_t root = 0; ok && root < n; root++) {
        if (state[root]) continue;
        uint32_t depth = 0;
        stack[depth++] = root;
        state[root] = 1;
        while (depth) {
            uint32_t x = stack[depth - 1];
            if (off[x] + cursor[x] < off[x + 1]) {
                uint32_t t = to[off[x] + cursor[x]++];
                if (t != UINT32_MAX && !state[t]) state[t] = 1, stack[depth++] = t;
            } else {
                depth--;
                out[k++] = x;
            }
        }
    }
    frag *frags = ok ? malloc((n + 1) * sizeof *frags) : NULL;
    ok = ok && frags;
    for (uint32_t i = 0; ok && i < n; i++) {
        frags[i] = c->frags[out[i]];
        ents[i] = c->ents[out[i]];
    }
    if (ok) memcpy(c->frags, frags, n * sizeof *frags);
    if (ok) memcpy(c->ents, ents, n * sizeof *ents);
    free(frags);
    free(off), free(to), free(out), free(stack), free(cursor), free(state), free(ents);
    return ok;
}

/* The document's text before the first object. */
static int document_head(char *buf, size_t size)
{
    return snprintf(buf, size, "{\n\t\"version\":\t%d,\n\t\"entities\":\t[", HOST_SCENE_VERSION);
}

#define STREAM_CHUNK ((size_t)256 << 10) /* a save writes its text in pieces of about this */

/* Write the objects captured since the last call to the save's file (the document's head
 * before the first) and empty the writer for the next ones. Only while the order is final:
 * order_references keeps every object before the first one that refers forward where it
 * is. A failed write is kept by the file's spool (the save then fails at its end). */
static void stream_out(capture *c)
{
    if (c->n == c->flushed) return;
    char head[64];
    struct iovec iov[2];
    int n = 0;
    size_t from = 0; /* the first object has no ", " before it */
    if (c->flushed == 0) {
        iov[n++] = (struct iovec){head, (size_t)document_head(head, sizeof head)};
        from = c->frags[0].start;
    }
    iov[n++] = (struct iovec){c->jw.buf + from, c->jw.len - from};
    /* the spool's thread lays out the next piece's floats while it keeps up, else we do */
    c->jw.defer_f32 = host_spool_keeps_up(c->stream->spool);
    savefile_write(c->stream, iov, n);
    c->flushed = c->n;
    c->jw.len = 0;
}

/* Capture every live entity with a component of mgrs (with_kept: or kept JSON, or a scene
 * id) as text into c. False when a manager failed or memory ran out. */
static bool capture_walk(scene_save *v, host_manager *const *mgrs, size_t count, bool with_kept,
                         size_t lead, capture *c)
{
    uint32_t n = 0;
    order_key *keys = v->keys = base_order(v->sc, &n);
    uint32_t *pos_of = NULL;
    host_jw_init(&c->jw);
    if (lead && host_jw_reserve(&c->jw, lead)) { /* room for the caller before the objects */
        memset(c->jw.buf, ' ', lead);
        c->jw.len = lead;
    }
    c->jw.id_of = id_of_for_writer;
    c->jw.ctx = v->sc;
    c->jw.defer_f32 = c->stream != NULL; /* the save's spool lays its floats out */
    c->wrote = calloc(count + 1, 1);
    c->managers = count;
    c->row = c->record ? calloc(count + 1, sizeof *c->row) : NULL;
    bool error = !keys || !c->wrote || (c->record && !c->row) || table_init(&v->table, 1024) != 0;
    /* the text of 100 entities tells how much the rest will need: one allocation */
    v->saving = UINT32_MAX;
    for (uint32_t i = 0; !error && i < n; i++) { /* scene ids first: made ones avoid them */
        store_entry *se = scene_entry_of(v->sc, keys[i].e);
        if (!se || !se->id) continue;
        if (looks_like_index_id(se->id)) v->index_ids_taken = true;
        if (made_reserve(v, keys[i].index) != 0)
            error = true;
        else if (id_used(v, se->id))
            error = !make_id(v, keys[i].index, se->id, false); /* twice */
        else
            error = !use_id(v, se->id);
    }
    v->sc->save = v;
    for (uint32_t i = 0; !error && i < n; i++) {
        if (i == 100 && n > 200 && !c->stream)
            error = !host_jw_reserve(&c->jw, c->jw.len / 100 * (n + n / 8));
        v->saving = c->n;
        v->saving_entity = keys[i].e;
        error = !save_entity(v, c, mgrs, count, with_kept, keys[i].e) || error;
        v->saving = UINT32_MAX;
        if (c->n && c->ents[c->n - 1].id == keys[i].e.id) saved_mark(v, keys[i].e);
        if (c->stream && !v->forward && c->jw.len >= STREAM_CHUNK) stream_out(c);
    }
    if (!error && v->edge_count) { /* referenced entities before the ones referring to them */
        pos_of = v->pos_of = calloc((size_t)v->cap + 1, sizeof *pos_of);
        for (uint32_t i = 0; pos_of && i < c->n; i++) pos_of[ecs_entity_index(c->ents[i])] = i + 1;
        bool ordered = pos_of != NULL; /* often: every reference points back already */
        for (uint32_t i = 0; ordered && i < v->edge_count; i++) {
            uint32_t p = pos_of[ecs_entity_index(v->edges[i].to)];
            ordered = !p || c->ents[p - 1].id != v->edges[i].to.id || p - 1 < v->edges[i].from;
        }
        error = !pos_of || (!ordered && !order_references(v, c, pos_of));
    }
    /* an entity referenced but with nothing of its own: write its id so references hold */
    for (uint32_t r = 0; !error && r < v->ref_count; r++) {
        ecs_entity ref = v->referenced[r];
        if (v->written[ecs_entity_index(ref)]) continue;
        size_t begin = c->jw.len + 2;
        host_jw_raw(&c->jw, ", {", 3);
        host_jw_key(&c->jw, false, ENTITY_TABS, "id");
        c->row_id = c->jw.len;
        if (c->record) memset(c->row, 0, c->managers * sizeof *c->row);
        host_jw_quoted(&c->jw, v->made[ecs_entity_index(ref)]);
        host_jw_newline(&c->jw, ENTITY_TABS - 1);
        host_jw_raw(&c->jw, "}", 1);
        error = c->jw.no_memory || !capture_add(c, begin, ref);
        saved_mark(v, ref);
    }
    v->sc->save = NULL;
    return !error && !v->failed && !c->jw.no_memory;
}

/* A manager's write_component or save_component stopped by sig while v wrote entity
 * v->saving_entity: one line naming them, its plugin marked crashed. */
static void write_crashed(scene_save *v, int sig)
{
    v->sc->save = NULL;
    host_manager *m = v->current;
    const char *in = m && m->desc.write_component ? "write_component" : "save_component";
    host_error("scene", "manager '%s' %s in %s, writing entity #%u.%u", m ? m->name : "?",
               host_signame_outcome(sig), in, ecs_entity_index(v->saving_entity),
               ecs_entity_generation(v->saving_entity));
    if (m) host_world_crashed(v->w, m->owner, sig, in);
}

typedef struct capture_call {
    scene_save *v;
    host_manager *const *mgrs;
    size_t count, lead;
    bool with_kept, ok;
    capture *c;
} capture_call;

static void call_capture(void *arg)
{
    capture_call *k = arg;
    k->ok = capture_walk(k->v, k->mgrs, k->count, k->with_kept, k->lead, k->c);
}

/* capture_walk under the crash guard (--safe): a manager whose write_component or
 * save_component crashes fails the capture (write_crashed). */
static bool capture_run(scene_save *v, host_manager *const *mgrs, size_t count, bool with_kept,
                        size_t lead, capture *c)
{
    capture_call k = {v, mgrs, count, lead, with_kept, false, c};
    int sig = host_world_guard(v->w, NULL, call_capture, &k);
    if (sig) write_crashed(v, sig);
    return !sig && k.ok;
}

static void capture_free(capture *c)
{
    host_jw_free(&c->jw);
    free(c->frags);
    free(c->ents);
    free(c->wrote);
    free(c->at);
    free(c->id_at);
    free(c->row);
}

static void save_free(scene_save *v, capture *c)
{
    free(v->keys);
    free(v->pos_of);
    for (str_block *b = v->strings, *next; b; b = next) next = b->next, free(b);
    free(v->made);
    free(v->written);
    free(v->used);
    free(v->table.slot);
    free(v->referenced);
    free(v->edges);
    capture_free(c);
}

/* The whole document as pieces of text: {"version": 1, "entities": [the captured
 * objects], extra keys}, ending with a newline. The objects stay where capture put them;
 * head and tail hold the rest. */
typedef struct pieces {
    struct iovec *iov;
    int n;
    size_t len;
    host_jwriter head, tail;
} pieces;

static void pieces_free(pieces *d)
{
    free(d->iov);
    host_jw_free(&d->head);
    host_jw_free(&d->tail);
}

/* The end of a document into tail: the "]" of the entities, the unknown top-level keys
 * (extra), the last "}". */
static void document_tail(host_jwriter *tail, const cJSON *extra)
{
    host_jw_raw(tail, "]", 1);
    const cJSON *x;
    cJSON_ArrayForEach(x, extra)
    {
        host_jw_key(tail, true, 1, x->string);
        host_jw_start(tail, 1);
        tail->api.value(&tail->api, x);
        host_jw_finish(tail);
    }
    host_jw_raw(tail, "\n}\n", 3);
}

static bool document(const capture *c, const cJSON *extra, pieces *d)
{
    host_jw_init(&d->head);
    host_jw_init(&d->tail);
    char head[64];
    if (c->flushed == 0) host_jw_raw(&d->head, head, (size_t)document_head(head, sizeof head));
    document_tail(&d->tail, extra);
    uint32_t first = c->flushed; /* the objects before it are in the file already */
    bool in_order = first == 0 || first == c->n || c->frags[first].start == 2;
    for (uint32_t i = first + 1; in_order && i < c->n; i++) /* then one piece */
        in_order = c->frags[i].start == c->frags[i - 1].start + c->frags[i - 1].len + 2;
    uint32_t parts = c->n == first ? 0 : in_order ? 1 : c->n - first;
    d->iov = malloc((parts + 2) * sizeof *d->iov);
    if (!d->iov || d->head.error || d->tail.error) return false;
    d->n = 0;
    d->iov[d->n++] = (struct iovec){d->head.buf, d->head.len};
    if (in_order && c->n > first) { /* after streamed objects, with the first one's ", " */
        const frag *last = &c->frags[c->n - 1];
        size_t from = c->frags[first].start - (first ? 2 : 0);
        d->iov[d->n++] = (struct iovec){c->jw.buf + from, last->start + last->len - from};
    }
    for (uint32_t i = first; !in_order && i < c->n; i++) { /* from the second on, with ", " */
        size_t skip = i ? 2 : 0;
        d->iov[d->n++] =
            (struct iovec){c->jw.buf + c->frags[i].start - skip, c->frags[i].len + skip};
    }
    d->iov[d->n++] = (struct iovec){d->tail.buf, d->tail.len};
    d->len = 0;
    for (int i = 0; i < d->n; i++) d->len += d->iov[i].iov_len;
    return true;
}

/* The top-level extras a save writes: the store's (a loaded scene's unknown keys, the
 * states kept for plugins that are away) with the own state of every loaded plugin that
 * offers one written now under "plugins". A copy (cJSON_Delete it), or NULL when there is
 * nothing; NULL with *ok false when a plugin's write failed (said, naming it) or memory ran
 * out. */
static cJSON *save_extras(host_scene_store *sc, const char *path, bool *ok)
{
    cJSON *extra = sc->extra ? cJSON_Duplicate(sc->extra, true) : cJSON_CreateObject();
    cJSON *all = extra ? cJSON_GetObjectItemCaseSensitive(extra, HOST_PSTATE_KEY) : NULL;
    if (extra && !all) all = cJSON_AddObjectToObject(extra, HOST_PSTATE_KEY);
    *ok = all != NULL;
    const host_scene_states *st = &sc->states;
    void *p;
    for (size_t i = 0; *ok && st->holder && (p = st->holder(st->ctx, i)); i++) {
        char why[400];
        size_t len = 0;
        const char *name = st->name(p);
        char *text = st->text(p, &len, why, sizeof why);
        cJSON *v = text && len ? cJSON_ParseWithLength(text, len) : NULL;
        cJSON_DeleteItemFromObjectCaseSensitive(all, name);
        if (!text)
            host_error("scene", "%s: plugin '%s' could not write its plugin state: %s", path, name,
                       why);
        *ok = text && (!len || (v && cJSON_AddItemToObject(all, name, v)));
        if (!*ok && v && !cJSON_GetObjectItemCaseSensitive(all, name)) cJSON_Delete(v);
        free(text);
    }
    if (*ok && !all->child) cJSON_DeleteItemFromObjectCaseSensitive(extra, HOST_PSTATE_KEY);
    if (!*ok || !extra->child) {
        cJSON_Delete(extra);
        return NULL;
    }
    return extra;
}

ecs_status host_scene_save(host_scene_store *sc, const char *path)
{
    host_world *w = sc->world;
    scene_save v = {.sc = sc, .w = w};
    uint64_t t0 = host_now_ns();
    savefile f;
    capture c = {.stream = &f};
    pieces d = {0};
    ecs_status s = savefile_open(&f, path, false);
    if (s != ECS_OK) return s;
    bool ok = false;
    cJSON *extra = save_extras(sc, path, &ok);
    ok = ok && capture_run(&v, w->managers, w->manager_count, true, 0, &c) &&
         document(&c, extra, &d);
    cJSON_Delete(extra);
    if (ok) savefile_write(&f, d.iov, d.n);
    s = savefile_close(&f, ok);
    if (!ok)
        host_error("scene", "%s: not saved: a manager failed or memory ran out", path);
    else if (s == ECS_OK)
        host_info("scene", "saved %u entities to %s in %.1f ms", c.n, path,
                  (double)(host_now_ns() - t0) * 1e-6);
    pieces_free(&d);
    save_free(&v, &c);
    return ok ? s : ECS_ERR_NO_MEMORY;
}

/* ---- capture and restore: moving one plugin's components between its versions ---- */

bool host_scene_capture(host_scene_store *sc, host_manager *const *mgrs, size_t count,
                        host_scene_captured *out)
{
    host_world *w = sc->world;
    scene_save v = {.sc = sc, .w = w};
    capture c = {.record = true};
    pieces d = {0};
    char head[64];
    size_t h = (size_t)document_head(head, sizeof head);
    bool ok = capture_run(&v, mgrs, count, false, h - 2, &c) && document(&c, NULL, &d);
    char *text = NULL, **names = calloc(count + 1, sizeof *names);
    size_t at = 0;
    bool in_place = ok && d.n == 3 && c.frags[0].start == h;
    if (in_place) { /* in order: the text is the writer's, offsets as recorded */
        memcpy(c.jw.buf, d.iov[0].iov_base, h); /* over the lead and the first ", " */
        host_jw_raw(&c.jw, d.iov[2].iov_base, d.iov[2].iov_len);
        if (host_jw_reserve(&c.jw, 1)) {
            text = c.jw.buf;
            at = c.jw.len;
            c.jw.buf = NULL;
            c.jw.len = c.jw.cap = 0;
        }
    } else if (ok && (text = malloc(d.len + 1))) {
        for (int i = 0; i < d.n; at += d.iov[i].iov_len, i++)
            memcpy(text + at, d.iov[i].iov_base, d.iov[i].iov_len);
    }
    for (size_t m = 0; names && m < count; m++)
        if (!(names[m] = strdup(mgrs[m]->name))) ok = false;
    if (text) text[at] = '\0';
    pieces_free(&d);
    *out = (host_scene_captured){0};
    if (ok && text && names) {
        *out = (host_scene_captured){text, at, c.ents, c.n, count, names, NULL, NULL};
        if (in_place && c.n) { /* the restore finds values without reading the text */
            out->at = c.at;
            out->id_at = c.id_at;
            c.at = NULL;
            c.id_at = NULL;
        }
        c.ents = NULL;
    } else {
        if (ok) host_error("scene", "out of memory capturing components");
        free(text);
        for (size_t m = 0; names && m < count; m++) free(names[m]);
        free(names);
        ok = false;
    }
    save_free(&v, &c);
    return ok;
}

void host_scene_captured_free(host_scene_captured *c)
{
    free(c->text);
    free(c->ents);
    for (size_t m = 0; c->names && m < c->count; m++) free(c->names[m]);
    free(c->names);
    free(c->at);
    free(c->id_at);
    *c = (host_scene_captured){0};
}

/* A capture's recorded offsets as l's: values by l->mgrs (matched by name), ids read
 * when asked. False when memory ran out. */
static bool adopt_offsets(scene_load *l, const host_scene_captured *doc)
{
    size_t m = l->managers ? l->managers : 1, *map = calloc(doc->count + 1, sizeof *map);
    l->n = l->cap = doc->n;
    l->ids = calloc((size_t)doc->n + 1, sizeof *l->ids);
    l->id_at = calloc((size_t)doc->n + 1, sizeof *l->id_at);
    l->at = calloc((size_t)doc->n * m + 1, sizeof *l->at);
    l->ents = calloc((size_t)doc->n + 1, sizeof *l->ents);
    if (!map || !l->ids || !l->id_at || !l->at || !l->ents) {
        free(map);
        return load_fail_at(l, NO_POS, "out of memory"), false;
    }
    for (size_t k = 0; k < doc->count; k++) map[k] = manager_named(l, doc->names[k]);
    for (uint32_t i = 0; i < doc->n; i++) {
        l->ids[i] = "";
        l->id_at[i] = doc->id_at[i];
        for (size_t k = 0; k < doc->count; k++)
            if (map[k] < l->managers)
                l->at[(size_t)i * m + map[k]] = doc->at[(size_t)i * doc->count + k];
    }
    free(map);
    return true;
}

ecs_status host_scene_restore(host_scene_store *sc, const host_scene_captured *doc,
                              host_manager *const *mgrs, size_t count, const char *what,
                              int *crashed)
{
    host_world *w = sc->world;
    scene_load l = {.sc = sc,
                    .w = w,
                    .path = what,
                    .text = doc->text,
                    .len = doc->len,
                    .bad = -1,
                    .captured = true,
                    .mgrs = mgrs,
                    .managers = count};
    ecs_status s = ECS_ERR_BAD_VALUE;
    int sig = 0;
    uint32_t n = doc->n;
    if ((doc->at ? adopt_offsets(&l, doc) : prepare(&l)) && l.n == n) {
        if (n) memcpy(l.ents, doc->ents, n * sizeof *doc->ents); /* none: ents is NULL */
        const char *where;                                       /* the caller says it: *crashed */
        s = load_components(&l, &sig, &where);
    } else {
        load_fail_at(&l, NO_POS, "the captured document does not match its entities");
    }
    char prefix[64], *rest;
    snprintf(prefix, sizeof prefix, "%s: entities[%ld].", what, l.bad);
    if (s != ECS_OK && l.bad >= 0 && (size_t)l.bad < n &&
        strncmp(l.error, prefix, strlen(prefix)) == 0) { /* name the entity, not its place */
        rest = l.error + strlen(prefix);
        ecs_entity e = doc->ents[l.bad];
        captured_ids(&l);
        host_error("reload", "%s: entity '%s' (%u.%u): %s", what, l.ids[l.bad], ecs_entity_index(e),
                   ecs_entity_generation(e), rest);
    } else if (s != ECS_OK) {
        host_error("reload", "%s", l.error);
    }
    if (crashed) *crashed = sig;
    load_free(&l);
    return s;
}

/* ---- the inspector: a few entities as JSON, an edit of one component ---- */

bool host_scene_document_ends(host_scene_store *sc, char **head, size_t *head_len, char **tail,
                              size_t *tail_len)
{
    char text[64];
    int n = document_head(text, sizeof text);
    bool ok = false;
    cJSON *extra = save_extras(sc, "the download", &ok); /* plugin states too, as a save */
    host_jwriter t;
    host_jw_init(&t);
    document_tail(&t, extra);
    cJSON_Delete(extra);
    *head = ok ? malloc((size_t)n + 1) : NULL;
    *tail = ok && !t.error ? malloc(t.len + 1) : NULL;
    if (*head) memcpy(*head, text, (size_t)n + 1), *head_len = (size_t)n;
    if (*tail) memcpy(*tail, t.buf, t.len), (*tail)[t.len] = '\0', *tail_len = t.len;
    host_jw_free(&t);
    if (*head && *tail) return true;
    free(*head), free(*tail);
    *head = *tail = NULL;
    return false;
}

typedef struct entities_call {
    scene_save *v;
    capture *c;
    const ecs_entity *list;
    uint32_t n;
    bool error;
} entities_call;

/* The objects of the live entities of k->list, each as a save writes it. */
static void call_entities(void *arg)
{
    entities_call *k = arg;
    scene_save *v = k->v;
    for (uint32_t i = 0; !k->error && i < k->n; i++) {
        if (!host_entity_alive(v->w->entities, k->list[i])) continue;
        size_t before = k->c->jw.len;
        v->saving_entity = k->list[i];
        k->error = !save_entity(v, k->c, v->w->managers, v->w->manager_count, true, k->list[i]);
        if (!k->error && k->c->jw.len == before) { /* nothing to save: the id alone */
            char guess[300];
            host_jw_raw(&k->c->jw, ", {", 3);
            host_jw_key(&k->c->jw, false, ENTITY_TABS, "id");
            host_jw_quoted(&k->c->jw, guess_id(v, k->list[i], guess, sizeof guess));
            host_jw_raw(&k->c->jw, "}", 1);
        }
    }
}

/* The inspector's reads (host_scene_entities_text) keep one save context in the store
 * (s->view): its arrays by entity index are made once (a fresh one per read cost a page
 * fault per 4 KiB of indices up to the entity read: 10 ms and more at index 4 M; kept, 9
 * bytes an index up to the highest read); between reads only what the last one set is
 * undone: the ids it made (every made id's entity is in `referenced`), the ids in use, the
 * references seen, the strings. */
struct host_scene_view {
    scene_save v;
};

#define VIEW_INDICES ((size_t)ECS_ENTITY_MAX_INDEX + 1)

static void view_free(host_scene_view *view)
{
    if (!view) return;
    if (view->v.cap == VIEW_INDICES) { /* reserved by view_init, not malloc'd */
        host_mem_unreserve(view->v.made, VIEW_INDICES * sizeof *view->v.made);
        host_mem_unreserve(view->v.written, VIEW_INDICES);
        view->v.made = NULL, view->v.written = NULL;
    }
    capture none = {0};
    save_free(&view->v, &none);
    free(view);
}

/* A view's save context: its arrays by index reserved at once for every index (address
 * space the OS fills with zero pages as they are touched: a read of index 4 M costs a page,
 * not a copy and a clear of everything below, nor 36 MB of memory), so made_reserve never
 * grows them. */
static void view_init(scene_save *v)
{
    v->saving = UINT32_MAX;
    v->made = host_mem_reserve(VIEW_INDICES * sizeof *v->made, 0);
    v->written = v->made ? host_mem_reserve(VIEW_INDICES, 0) : NULL;
    if (v->made && v->written) {
        v->cap = (uint32_t)VIEW_INDICES;
        return;
    }
    if (v->made) host_mem_unreserve(v->made, VIEW_INDICES * sizeof *v->made);
    v->made = NULL; /* made_reserve grows plain arrays then, as for a save */
}

/* Undo what the last read set in v, keeping its arrays. */
static void view_reset(scene_save *v)
{
    for (uint32_t i = 0; i < v->ref_count; i++) {
        uint32_t idx = ecs_entity_index(v->referenced[i]);
        if (idx < v->cap) v->made[idx] = NULL;
    }
    for (str_block *b = v->strings, *next; b; b = next) next = b->next, free(b);
    v->strings = NULL;
    v->ref_count = v->edge_count = v->used_count = 0;
    if (v->table.slot)
        memset(v->table.slot, 0, ((size_t)v->table.mask + 1) * sizeof *v->table.slot);
    v->failed = v->forward = false;
    v->current = NULL;
}

char *host_scene_entities_text(host_scene_store *sc, const ecs_entity *list, uint32_t n,
                               size_t *len)
{
    host_world *w = sc->world;
    host_scene_store *s = sc;
    if (!s->view && (s->view = calloc(1, sizeof *s->view))) {
        view_init(&s->view->v);
        s->view_free = view_free; /* the store frees it without knowing it (store.c) */
    }
    if (!s->view) return NULL;
    scene_save *v = &s->view->v;
    v->sc = sc;
    v->w = w;
    capture c = {0};
    host_jw_init(&c.jw);
    c.jw.id_of = id_of_for_writer;
    c.jw.ctx = sc;
    c.wrote = calloc(w->manager_count + 1, 1);
    entities_call k = {v, &c, list, n, !c.wrote || (!v->table.slot && table_init(&v->table, 64))};
    sc->save = v;
    int sig =
        k.error ? 0 : host_world_guard(w, NULL, call_entities, &k); /* --safe: writes are guarded */
    if (sig) write_crashed(v, sig);
    sc->save = NULL;
    bool error = k.error || sig || v->failed || c.jw.no_memory;
    char *text = error ? NULL : malloc(c.jw.len + 3);
    if (text) { /* "[" + the objects without the first ", " + "]" */
        size_t skip = c.jw.len >= 2 ? 2 : 0;
        text[0] = '[';
        memcpy(text + 1, c.jw.buf + skip, c.jw.len - skip);
        text[1 + c.jw.len - skip] = ']';
        text[2 + c.jw.len - skip] = '\0';
        if (len) *len = 2 + c.jw.len - skip;
    }
    view_reset(v);
    capture_free(&c);
    return text;
}

/* Load the one-entity document text[0..len) as e's component of manager m, an edit. */
static ecs_status edit_load(host_scene_store *sc, ecs_entity e, host_manager *m, const char *text,
                            size_t len, char *error, size_t errlen)
{
    host_world *w = sc->world;
    host_manager *mgrs[1] = {m};
    scene_load l = {.sc = sc,
                    .w = w,
                    .path = "edit",
                    .text = text,
                    .len = len,
                    .lines = true,
                    .bad = -1,
                    .mgrs = mgrs,
                    .managers = 1,
                    .edit = true}; /* set before pass one: no read-ahead for an edit */
    ecs_status s = ECS_ERR_BAD_VALUE;
    int sig = 0;
    const char *where;
    if (prepare(&l) && l.n == 1) {
        l.ents[0] = e;
        s = load_components(&l, &sig, &where);
        if (sig) host_world_crashed(w, m->owner, sig, where);
    }
    if (s != ECS_OK) host_format(error, errlen, "%s", l.error);
    load_free(&l);
    return s;
}

ecs_status host_scene_edit(host_scene_store *sc, ecs_entity e, const char *manager,
                           const char *text, size_t len, char *error, size_t errlen)
{
    host_world *w = sc->world;
    host_manager *m = NULL;
    for (size_t i = 0; i < w->manager_count && !m; i++)
        if (!strcmp(w->managers[i]->name, manager)) m = w->managers[i];
    if (!host_entity_alive(w->entities, e))
        return host_format(error, errlen, "entity %u.%u is not alive", ecs_entity_index(e),
                           ecs_entity_generation(e)),
               ECS_ERR_STALE_ENTITY;
    if (!m)
        return host_format(error, errlen, "no manager '%s' is loaded", manager), ECS_ERR_NOT_FOUND;
    if (!host_manager_loads(m))
        return host_format(error, errlen, "manager '%s' cannot load components", manager),
               ECS_ERR_UNSUPPORTED;
    size_t old_len = 0; /* what it has now: back if the edit fails */
    char *old_text = host_scene_entities_text(sc, &e, 1, &old_len);
    cJSON *old_doc = old_text ? cJSON_ParseWithLength(old_text, old_len) : NULL;
    cJSON *old_entity = cJSON_GetArrayItem(old_doc, 0);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(old_entity, "id");
    free(old_text);
    /* the edit as a scene of one entity, {"version": 1, "entities": [{"id": ID, "M": value}]}:
     * the value's own syntax errors point into the text the client sent */
    char err[768];
    cJSON *value = host_json_parse("body", text, len, err, sizeof err);
    if (!value) {
        cJSON_Delete(old_doc);
        host_format(error, errlen, "%s", err);
        return ECS_ERR_BAD_VALUE;
    }
    cJSON_Delete(value);
    cJSON *key = cJSON_CreateString(manager);
    char *id_json = cJSON_PrintUnformatted(id ? id : key), *key_json = cJSON_PrintUnformatted(key);
    cJSON_Delete(key);
    size_t cap = len + (id_json ? strlen(id_json) : 0) + (key_json ? strlen(key_json) : 0) + 64;
    char *doc_text = id_json && key_json ? malloc(cap) : NULL;
    int n = doc_text ? snprintf(doc_text, cap,
                                "{\"version\": 1, \"entities\": [{\"id\": %s, %s: %.*s}]}", id_json,
                                key_json, (int)len, text)
                     : 0;
    free(id_json);
    free(key_json);
    if (!doc_text) {
        cJSON_Delete(old_doc);
        host_format(error, errlen, "out of memory");
        return ECS_ERR_NO_MEMORY;
    }
    ecs_status s = edit_load(sc, e, m, doc_text, (size_t)n, error, errlen);
    if (s != ECS_OK) { /* put the old value back (or none: the manager removed its own) */
        const cJSON *old = cJSON_GetObjectItemCaseSensitive(old_entity, manager);
        if (old) {
            cJSON *back = cJSON_CreateObject(), *bl = cJSON_AddArrayToObject(back, "entities");
            cJSON *be = cJSON_Duplicate(old_entity, 1);
            cJSON_AddNumberToObject(back, "version", HOST_SCENE_VERSION);
            for (cJSON *c = be ? be->child : NULL, *next; c; c = next) {
                next = c->next;
                if (strcmp(c->string, "id") && strcmp(c->string, manager))
                    cJSON_Delete(cJSON_DetachItemViaPointer(be, c));
            }
            cJSON_AddItemToArray(bl, be);
            char ignored[768];
            size_t back_len = 0;
            char *back_text = host_json_print(back, &back_len);
            if (!back_text ||
                edit_load(sc, e, m, back_text, back_len, ignored, sizeof ignored) != ECS_OK)
                host_error("inspect", "entity %u.%u: its old %s could not be put back: %s",
                           ecs_entity_index(e), ecs_entity_generation(e), manager, ignored);
            free(back_text);
            cJSON_Delete(back);
        }
    }
    free(doc_text);
    cJSON_Delete(old_doc);
    return s;
}

ecs_entity host_scene_entity_named(host_scene_store *sc, const char *id)
{
    return live_entity_named(sc, id);
}

const char *host_scene_stored_id(const host_scene_store *sc, ecs_entity e)
{
    const store_entry *se = scene_entry_of(sc, e);
    return se ? se->id : NULL;
}

/* ---- a plugin removed and added back: its components wait in the store ---- */

/* Keep the components of the captured document doc (a tree), see host_scene_keep. */
static bool keep_doc(host_scene_store *sc, const cJSON *doc, const ecs_entity *ents, uint32_t n)
{
    host_scene_store *s = sc;
    const cJSON *obj, *list = cJSON_GetObjectItemCaseSensitive(doc, "entities");
    uint32_t i = 0;
    bool ok = true;
    cJSON_ArrayForEach(obj, list)
    {
        if (i >= n) break;
        ecs_entity e = ents[i++];
        if (scene_store_reserve(s, ecs_entity_index(e)) != 0) return false;
        store_entry *se = &s->entry[ecs_entity_index(e)];
        if (se->entity != e.id) scene_entry_clear(se), se->entity = e.id;
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id"), *c;
        size_t len = strlen(id->valuestring);
        char *next;
        id_chunk *chunk = se->id ? NULL : scene_id_chunk_new(scene_id_room(len), &next);
        if (chunk) se->id = scene_id_put(chunk, &next, id->valuestring, len);
        if (!se->id) ok = false;
        cJSON_ArrayForEach(c, obj)
        {
            if (!strcmp(c->string, "id")) continue;
            if (!se->kept && !(se->kept = cJSON_CreateObject())) return false;
            cJSON_DeleteItemFromObjectCaseSensitive(se->kept, c->string);
            cJSON *copy = cJSON_Duplicate(c, 1);
            if (!copy || !cJSON_AddItemToObject(se->kept, c->string, copy)) ok = false;
        }
    }
    return ok;
}

bool host_scene_keep(host_scene_store *sc, const host_scene_captured *captured)
{
    cJSON *doc = host_jparse(captured->text, captured->len, NULL, NULL);
    bool kept = doc && keep_doc(sc, doc, captured->ents, captured->n);
    cJSON_Delete(doc);
    return kept;
}

/* Does the store entry keep JSON for one of mgrs? */
static bool keeps_any(const store_entry *se, host_manager *const *mgrs, size_t count)
{
    for (size_t m = 0; se->kept && m < count; m++)
        if (cJSON_GetObjectItemCaseSensitive(se->kept, mgrs[m]->name)) return true;
    return false;
}

ecs_status host_scene_restore_kept(host_scene_store *sc, host_manager *const *mgrs, size_t count)
{
    host_scene_store *s = sc;
    cJSON *doc = cJSON_CreateObject(), *list = cJSON_CreateArray();
    ecs_entity *ents = calloc(s->cap + 1, sizeof *ents);
    uint32_t n = 0, with_data = 0;
    bool ok = doc && list && ents;
    if (ok) {
        cJSON_AddNumberToObject(doc, "version", HOST_SCENE_VERSION);
        cJSON_AddItemToObject(doc, "entities", list);
    } else {
        cJSON_Delete(list);
    }
    for (uint32_t i = 0; ok && i < s->cap; i++) { /* every id: references may point there */
        store_entry *se = &s->entry[i];
        if (!se->entity || !se->id) continue;
        cJSON *obj = cJSON_CreateObject();
        ok = obj && cJSON_AddStringToObject(obj, "id", se->id);
        for (size_t m = 0; ok && m < count; m++) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(se->kept, mgrs[m]->name);
            if (k) ok = cJSON_AddItemToObject(obj, mgrs[m]->name, cJSON_Duplicate(k, 1));
        }
        if (obj) cJSON_AddItemToArray(list, obj);
        ents[n++] = ecs_entity_make(i, ecs_entity_generation((ecs_entity){se->entity}));
        with_data += keeps_any(se, mgrs, count);
    }
    size_t len = 0;
    char *text = ok && with_data ? host_json_print(doc, &len) : NULL;
    ecs_status st = !ok || (with_data && !text) ? ECS_ERR_NO_MEMORY : ECS_OK;
    host_scene_captured captured = {text, len, ents, n, 0, NULL, NULL, NULL};
    if (text)
        st = host_scene_restore(sc, &captured, mgrs, count, "restoring kept components", NULL);
    free(text);
    for (uint32_t i = 0; st == ECS_OK && with_data && i < s->cap; i++) {
        store_entry *se = &s->entry[i];
        for (size_t m = 0; se->kept && m < count; m++)
            cJSON_DeleteItemFromObjectCaseSensitive(se->kept, mgrs[m]->name);
        if (se->kept && !se->kept->child) cJSON_Delete(se->kept), se->kept = NULL;
    }
    if (with_data && st == ECS_OK)
        host_info("reload", "restored the kept components of %u entities", with_data);
    cJSON_Delete(doc);
    free(ents);
    return st;
}

/* The store's "plugins" object (made when make), or NULL. */
static cJSON *kept_states(host_scene_store *s, bool make)
{
    cJSON *all = s->extra ? cJSON_GetObjectItemCaseSensitive(s->extra, HOST_PSTATE_KEY) : NULL;
    if (all || !make) return cJSON_IsObject(all) ? all : NULL;
    if (!s->extra && !(s->extra = cJSON_CreateObject())) return NULL;
    return cJSON_AddObjectToObject(s->extra, HOST_PSTATE_KEY);
}

bool host_scene_keep_state(host_scene_store *sc, const char *name, const char *text, size_t len)
{
    cJSON *all = kept_states(sc, len > 0);
    if (all) cJSON_DeleteItemFromObjectCaseSensitive(all, name);
    if (len == 0) return true;
    cJSON *v = cJSON_ParseWithLength(text, len);
    if (!v || !all || !cJSON_AddItemToObject(all, name, v)) {
        cJSON_Delete(v);
        return false;
    }
    return true;
}

char *host_scene_take_state(host_scene_store *sc, const char *name, size_t *len)
{
    cJSON *all = kept_states(sc, false);
    cJSON *v = all ? cJSON_GetObjectItemCaseSensitive(all, name) : NULL;
    char *text = v ? host_json_print(v, len) : NULL;
    if (text) cJSON_DeleteItemFromObjectCaseSensitive(all, name);
    if (all && !all->child) cJSON_DeleteItemFromObjectCaseSensitive(sc->extra, HOST_PSTATE_KEY);
    return text;
}

bool host_scene_keep_owner(host_scene_store *sc, const void *owner)
{
    host_world *w = sc->world;
    host_manager **mgrs = calloc(w->manager_count + 1, sizeof *mgrs);
    size_t count = 0;
    for (size_t i = 0; mgrs && i < w->manager_count; i++) {
        if (w->managers[i]->owner != owner) continue;
        if (!host_manager_saves(w->managers[i])) { /* it cannot save: nothing to keep */
            free(mgrs);
            return false;
        }
        mgrs[count++] = w->managers[i];
    }
    host_scene_captured doc = {0};
    bool kept = mgrs && host_scene_capture(sc, mgrs, count, &doc) && host_scene_keep(sc, &doc);
    host_scene_captured_free(&doc);
    free(mgrs);
    return kept;
}
