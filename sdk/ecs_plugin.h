/* SPDX-License-Identifier: MIT */
/* ecs_plugin.h: the one header an ecs-host plugin needs (C11, also valid C++).
 *
 * A plugin is a shared object that exports exactly one symbol, ecs_plugin_entry(),
 * declared with ECS_PLUGIN_EXPORT(desc). It returns a description of the plugin: the ABI
 * it was built for, its name and version, the plugins it depends on, and its load /
 * unload functions. Everything the host offers reaches the plugin as a table of function
 * pointers (ecs_host): a plugin links no host symbol.
 *
 * Conventions used throughout this header:
 *
 * - Threading. The host calls every plugin function from one thread, the main thread,
 *   and every host function must be called from that thread: a call from another thread
 *   is refused (ECS_ERR_WRONG_TIME, NULL, false or nothing done; log() prints nothing)
 *   and the host reports the count in one error line at the next frame boundary. Tags
 *   on each callback and function say when it may be called:
 *     [main-thread]          any time from the main thread while the plugin is loaded;
 *     [load]                 only inside the plugin's load();
 *     [frame]                during a frame: inside an update, a system's run or an
 *                            entities_destroyed callback;
 *     [scene-load]           only inside a manager's read_component() or load_component();
 *     [scene-save]           only inside a manager's write_component() or save_component();
 *     [job]                  also from inside a job (a chunk of parallel_for or a task of
 *                            run_tasks, on any of the host's worker threads). A call
 *                            without this tag made from a job is refused like a call from
 *                            another thread, also when the chunk runs on the main thread.
 * - Ownership. Strings and structs passed to the host are copied unless a comment says
 *   otherwise. Pointers the host returns stay valid for as long as the comment says.
 * - Errors. Every call that can fail returns an ecs_status; ecs_status_text() turns it
 *   into a message. The host never aborts because of a plugin: a bad call is refused,
 *   logged with the plugin's name, and the host goes on.
 * - Versioning. ECS_ABI_MAJOR must match the host's exactly; a host accepts plugins
 *   built against an older or equal ECS_ABI_MINOR. A minor version may only append
 *   fields to the structs below, which is why every struct that may grow starts with
 *   its own size (struct_size): the receiver reads only the fields both sides know.
 */
#ifndef ECS_PLUGIN_H
#define ECS_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ECS_ABI_MAJOR 1
#define ECS_ABI_MINOR 1

/* The name of the one symbol a plugin exports, as a string for dlsym(). */
#define ECS_PLUGIN_ENTRY_NAME "ecs_plugin_entry"

#if defined(_WIN32)
#define ECS_EXPORT __declspec(dllexport)
#else
#define ECS_EXPORT __attribute__((visibility("default")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ECS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define ECS_PRINTF(fmt, args)
#endif

struct cJSON; /* from <cjson/cJSON.h>: scene data is exchanged as cJSON trees */

/* ---- Entities ---------------------------------------------------------------------
 *
 * An entity is a 32-bit id: a 22-bit index, an 8-bit generation above it, and the top
 * two bits zero. Index 0 is never handed out, so the all-zero id (a zero-initialized
 * ecs_entity) is the null entity and is never alive. An id is alive while the host's
 * generation byte for its index equals its generation; destroying an entity bumps that
 * byte, so every copy of the old id turns stale at once (a weak reference). Freed
 * indices are reused first-in first-out and only while more than 1024 wait, so an id is
 * handed out again only after at least 256 x 1024 destroys.
 *
 * Two inline checks, no call:
 * - ecs_alive(h, e) is exact: it reads the index's alive key (16 bits: the generation
 *   + 256 while the index is in use, else 0), the same answer as host->entity_alive().
 *   An id never handed out, or one whose index is free, is never alive.
 * - ecs_alive_gen(h, e) reads only the generation byte, so it has a horizon: after 256
 *   destroys of the same index (at least 255 x 1025 = 261,375 destroys in all) the byte
 *   shows a long-dead id's generation again, and it says alive for it; an index never
 *   handed out reads alive for generation 0. Use it only on ids you hear the destruction
 *   of (a manager hears every destroy), where the one load counts. */

typedef struct ecs_entity {
    uint32_t id;
} ecs_entity;

#define ECS_ENTITY_INDEX_BITS      22u
#define ECS_ENTITY_INDEX_MASK      ((1u << ECS_ENTITY_INDEX_BITS) - 1u)
#define ECS_ENTITY_GENERATION_BITS 8u
#define ECS_ENTITY_GENERATION_MASK ((1u << ECS_ENTITY_GENERATION_BITS) - 1u)
#define ECS_ENTITY_MAX_INDEX       ECS_ENTITY_INDEX_MASK /* highest index handed out */
#define ECS_MINIMUM_FREE_INDICES   1024u

static inline uint32_t ecs_entity_index(ecs_entity e)
{
    return e.id & ECS_ENTITY_INDEX_MASK;
}

static inline uint32_t ecs_entity_generation(ecs_entity e)
{
    return (e.id >> ECS_ENTITY_INDEX_BITS) & ECS_ENTITY_GENERATION_MASK;
}

static inline ecs_entity ecs_entity_make(uint32_t index, uint32_t generation)
{
    ecs_entity e;
    e.id = ((generation & ECS_ENTITY_GENERATION_MASK) << ECS_ENTITY_INDEX_BITS) |
           (index & ECS_ENTITY_INDEX_MASK);
    return e;
}

static inline ecs_entity ecs_entity_null(void)
{
    ecs_entity e;
    e.id = 0;
    return e;
}

static inline bool ecs_entity_is_null(ecs_entity e)
{
    return e.id == 0;
}
static inline bool ecs_entity_eq(ecs_entity a, ecs_entity b)
{
    return a.id == b.id;
}

/* True when e's generation equals the host's generation byte of its index (given the
 * host's generation array, ecs_host.generations). One byte load, no call. The unmasked
 * shift makes an id with either top bit set compare unequal to every byte, so such ids
 * are never alive. Not exact: an id the host never handed out, or one beyond the horizon
 * above, may read as alive; ecs_alive_exact_in() is exact. */
static inline bool ecs_alive_in(const uint8_t *generations, ecs_entity e)
{
    return generations[e.id & ECS_ENTITY_INDEX_MASK] == (e.id >> ECS_ENTITY_INDEX_BITS);
}

/* True when e is alive, exactly, given the host's alive keys (ecs_host.alive_keys): the key
 * of a live index is its generation + 256, of a free or never used index 0. One 16-bit
 * load, no call. An id with either top bit set asks for a key of 512 or more, which no
 * index holds. */
static inline bool ecs_alive_exact_in(const uint16_t *alive_keys, ecs_entity e)
{
    return alive_keys[e.id & ECS_ENTITY_INDEX_MASK] == (e.id >> ECS_ENTITY_INDEX_BITS) + 256u;
}

/* ---- Status ------------------------------------------------------------------------ */

typedef enum ecs_status {
    ECS_OK = 0,
    ECS_ERR_INVALID_ARGUMENT, /* a NULL, an out-of-range or malformed argument */
    ECS_ERR_NO_MEMORY,        /* an allocation failed */
    ECS_ERR_FULL,             /* every entity index is in use (2^22 - 1 live) */
    ECS_ERR_STALE_ENTITY,     /* the entity is dead, stale or null */
    ECS_ERR_NOT_FOUND,        /* no such name, entity, component or file */
    ECS_ERR_EXISTS,           /* the name is already registered, the component exists */
    ECS_ERR_ABI,              /* ABI or struct version the host cannot use */
    ECS_ERR_BAD_VALUE,        /* a value of the wrong type, length or range */
    ECS_ERR_CYCLE,            /* the change would make a cycle (hierarchy, dependencies) */
    ECS_ERR_IO,               /* a file could not be read or written */
    ECS_ERR_WRONG_TIME,       /* the call is not allowed at this point (see its tag) */
    ECS_ERR_UNSUPPORTED,      /* the operation is not offered by this manager or host */
    ECS_ERR_PLUGIN,           /* the plugin failed (its load() or a callback) */
    ECS_STATUS_COUNT
} ecs_status;

/* A short English message for a status; never NULL, also for values from a newer ABI. */
static inline const char *ecs_status_text(ecs_status s)
{
    static const char *const text[ECS_STATUS_COUNT] = {
        "ok",
        "invalid argument",
        "out of memory",
        "no free entity index (2^22 - 1 entities alive)",
        "entity is not alive",
        "not found",
        "already exists",
        "ABI version mismatch",
        "bad value",
        "would create a cycle",
        "input/output error",
        "not allowed at this point",
        "not supported",
        "plugin failure",
    };
    return ((unsigned)s < (unsigned)ECS_STATUS_COUNT) ? text[s] : "unknown status";
}

/* ---- Logging ----------------------------------------------------------------------- */

typedef enum ecs_log_level {
    ECS_LOG_ERROR = 0,
    ECS_LOG_WARN = 1,
    ECS_LOG_INFO = 2,
    ECS_LOG_DEBUG = 3
} ecs_log_level;

/* ---- Frames ------------------------------------------------------------------------ */

/* Information on the current frame. The host owns it and updates it in place before
 * each frame; a plugin may keep the pointer for as long as it is loaded. */
typedef struct ecs_frame_info {
    uint64_t frame; /* number of the frame being run, from 0 */
    /* Seconds since the previous frame started (0 on frame 0); with --fixed-dt MS, MS/1000
     * on every frame. */
    double dt;
    double time; /* seconds since the first frame started; with --fixed-dt, frame * dt */
    /* -- ABI 1.1 -- */
    /* This frame's random seed: a function of the session's seed (kept in snapshots) and
     * the frame number, so a run replayed from a snapshot draws the same numbers. Draw
     * from it with ecs_random_next() (below) rather than rand() or the clock. */
    uint64_t seed;
} ecs_frame_info;

/* The next number of a xorshift64* sequence whose state is *x (start it from
 * frame->seed, or from a value derived from it; a zero state is moved off zero). */
static inline uint64_t ecs_random_next(uint64_t *x)
{
    uint64_t v = *x ? *x : 0x9E3779B97F4A7C15ull;
    v ^= v >> 12;
    v ^= v << 25;
    v ^= v >> 27;
    *x = v;
    return v * 0x2545F4914F6CDD1Dull;
}

/* A float in [0, 1) from the sequence of *x. */
static inline float ecs_random_float(uint64_t *x)
{
    return (float)(ecs_random_next(x) >> 40) * (1.0f / 16777216.0f);
}

/* ---- Component managers -----------------------------------------------------------
 *
 * A manager owns all the data of one component type and is the only one that knows
 * which entities have it. The host calls it through this table. `state` is the
 * manager's own pointer, passed back as the first argument of every callback.
 * Optional entries may be NULL. */

typedef struct ecs_host ecs_host;

/* [scene-save] A JSON writer for write_component: the fast way to save, straight into
 * the scene file's text with no cJSON tree in between. Write exactly one value (an
 * object, an array, a string, ...) or nothing when the entity has no component. Inside
 * an object call key() before each value. Misuse (a value where a key is due, a key
 * outside an object, end_array closing an object, a NaN or infinite number, a key twice
 * in one object, an unclosed value) is not undefined behaviour: the host fails the save
 * with a message naming the plugin, the manager, the entity and the mistake (whatever a
 * load would refuse, the save refuses). The writer is valid only during the call. */
typedef struct ecs_json_writer ecs_json_writer;
struct ecs_json_writer {
    uint32_t struct_size; /* sizeof(ecs_json_writer) as the host was built */
    void (*begin_object)(ecs_json_writer *w);
    void (*end_object)(ecs_json_writer *w);
    void (*begin_array)(ecs_json_writer *w);
    void (*end_array)(ecs_json_writer *w);
    void (*key)(ecs_json_writer *w, const char *key); /* UTF-8, escaped by the host */
    void (*string)(ecs_json_writer *w, const char *s);
    /* The shortest text that reads back as exactly x (a double / a float). */
    void (*number)(ecs_json_writer *w, double x);
    void (*number_f32)(ecs_json_writer *w, float x);
    /* x[0..n) as an array of number_f32 values: a vector, a quaternion, bounds. */
    void (*array_f32)(ecs_json_writer *w, const float *x, uint32_t n);
    void (*boolean)(ecs_json_writer *w, bool b);
    void (*null)(ecs_json_writer *w);
    /* A whole cJSON value (not owned), written as save_component's would be. */
    void (*value)(ecs_json_writer *w, const struct cJSON *v);
    /* A reference: e's scene id as a string (what scene_id_of gives). A dead e fails
     * the save. */
    void (*entity)(ecs_json_writer *w, ecs_entity e);
};

/* [scene-load] What the next value of an ecs_json_reader is (ecs_json_reader.peek). */
typedef enum ecs_json_type {
    ECS_JSON_END, /* no value: the open array or object has no more, or the reader failed */
    ECS_JSON_NULL,
    ECS_JSON_FALSE,
    ECS_JSON_TRUE,
    ECS_JSON_NUMBER,
    ECS_JSON_STRING,
    ECS_JSON_ARRAY,
    ECS_JSON_OBJECT
} ecs_json_type;

/* [scene-load] A JSON reader for read_component: the fast way to load, values pulled
 * straight from the scene file's text with no cJSON tree in between (the mirror image of
 * ecs_json_writer). The reader stands before the component's one value; read it whole.
 * Objects: begin_object, then `while (r->key(r, &k))` read the member's value (one left
 * unread is passed over by the next key()); key() returns false at the '}' and closes the
 * object. Arrays: begin_array, then `while (r->more(r))` read one element each time (a
 * read without more() takes the next element too); more() returns false at the ']'.
 *
 * Every reading call returns false when the value is not of its kind ("expected a
 * number, found a string"), and then the reader has failed: it keeps the first error,
 * with the file, line, column and JSON path of the value, and every later call returns
 * false (peek: ECS_JSON_END) so a manager may read on and check once. A manager that
 * dislikes a value it read says so with error() (located at the value or key read last)
 * and returns an error status; one whose reader failed returns ECS_ERR_BAD_VALUE.
 * Strings are valid until the next call on the reader. The reader checks the text as it
 * reads it (and what it passes over): a syntax error fails it like a value of the wrong
 * kind, with the parser's message ("expected ',' or ']' after an array element").
 * The reader is valid only during the call. */
typedef struct ecs_json_reader ecs_json_reader;
struct ecs_json_reader {
    uint32_t struct_size; /* sizeof(ecs_json_reader) as the host was built */
    /* The type of the next value, without reading it or changing what comes next:
     * inside an object call it after key(); inside an array, before or after more().
     * ECS_JSON_END at the end of an array (more() then closes it), where a key is due,
     * after the value, or once the reader failed. */
    ecs_json_type (*peek)(ecs_json_reader *r);
    bool (*begin_object)(ecs_json_reader *r);
    /* Inside an object: the next member's key into *key (UTF-8, NUL-terminated), its
     * value next; false at the end of the object, which is then closed. */
    bool (*key)(ecs_json_reader *r, const char **key);
    bool (*begin_array)(ecs_json_reader *r);
    /* Inside an array: true when an element follows (read it next); false at the end,
     * which closes the array. */
    bool (*more)(ecs_json_reader *r);
    bool (*number)(ecs_json_reader *r, double *x);
    /* A number as the nearest float; one beyond a float's range is an error. */
    bool (*number_f32)(ecs_json_reader *r, float *x);
    /* An array of exactly n numbers into x[0..n) as floats (a vector, a quaternion):
     * "expected an array of 3 finite numbers, found 2 elements" otherwise. */
    bool (*array_f32)(ecs_json_reader *r, float *x, uint32_t n);
    /* A string (UTF-8, NUL-terminated; \u0000 is refused in scene files) and its
     * length in *len (may be NULL). */
    bool (*string)(ecs_json_reader *r, const char **s, size_t *len);
    bool (*boolean)(ecs_json_reader *r, bool *b);
    /* The next value, whatever it is, passed over. */
    bool (*skip)(ecs_json_reader *r);
    /* A reference: a string scene id resolved as scene_resolve() resolves it (that
     * entity's component of this manager is loaded first); an unknown id or a cycle
     * fails the reader at the string. */
    bool (*entity)(ecs_json_reader *r, ecs_entity *e);
    /* Fail the reader with a message about the value (or key) read last. */
    void (*error)(ecs_json_reader *r, const char *fmt, ...) ECS_PRINTF(2, 3);
    /* Has the reader failed? */
    bool (*failed)(ecs_json_reader *r);
};

/* "a number", "an object", ... for "expected X, found Y" messages ("nothing" for
 * ECS_JSON_END): the words the reader's own messages use. */
static inline const char *ecs_json_type_text(ecs_json_type t)
{
    static const char *const names[] = {"nothing",  "null",     "false",    "true",
                                        "a number", "a string", "an array", "an object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "nothing";
}

/* Refuse the value r stands before, of kind `found` (from peek()): pass over it, so that
 * the error points at it, and fail r with "expected <expected>, found <its kind>".
 * Returns false. (The parentheses keep a function-like skip() macro, as cmocka's, out.) */
static inline bool ecs_json_refuse(ecs_json_reader *r, ecs_json_type found, const char *expected)
{
    (r->skip)(r);
    r->error(r, "expected %s, found %s", expected, ecs_json_type_text(found));
    return false;
}

/* Is key (from key()) exactly name? The comparison a read_component makes for each
 * member, inline: for a component's few short keys cheaper than a call to strcmp. */
static inline bool ecs_json_key_is(const char *key, const char *name)
{
    while (*name && *key == *name) key++, name++;
    return *key == *name;
}

typedef struct ecs_manager_desc {
    uint32_t struct_size; /* sizeof(ecs_manager_desc) as the plugin was built */
    const char *name;     /* unique among managers: the key of its data in scene files */
    void *state;

    /* [frame] Update every component in one call. Managers run in registration order. */
    void (*update)(void *state, const ecs_frame_info *frame);

    /* [frame] Entities destroyed since the last announcement, once per frame after all
     * updates. Every manager hears of every destroyed entity exactly once; the ids are
     * already dead (ecs_alive is false) and their indices are not yet reused. The array
     * is the host's and valid only during the call. Optional. */
    void (*entities_destroyed)(void *state, const ecs_entity *entities, uint32_t count);

    /* [main-thread] Number of components the manager holds (for statistics). Optional. */
    uint32_t (*count)(void *state);

    /* [scene-save] Write entity e's component(s) as a new cJSON value into *out; set
     * *out = NULL (and return ECS_OK) when e has none. Optional. */
    ecs_status (*save_component)(void *state, ecs_entity e, struct cJSON **out);

    /* [scene-load] Give entity e the component(s) described by json (not owned),
     * replacing what it has (the inspector edits a component this way). On error the
     * manager must leave e without a component of its own (the host puts the old value
     * back). Optional. */
    ecs_status (*load_component)(void *state, ecs_entity e, const struct cJSON *json);

    /* [scene-save] Write entity e's component(s) as one JSON value through w, or write
     * nothing when e has none. Several times faster than save_component, which the host
     * no longer calls when this is set (it derives a cJSON value from the text when it
     * needs one, for a reload's migration). The file reads the same either way. Optional. */
    ecs_status (*write_component)(void *state, ecs_entity e, ecs_json_writer *w);

    /* [scene-load] Give entity e the component(s) of the one JSON value r stands before,
     * replacing what it has; the same contract as load_component, which the host no
     * longer calls when this is set (a scene load, a reload's migration, an inspector
     * edit, components kept while a plugin was away: all go through the reader). Several
     * times faster: no tree is built. Optional. */
    ecs_status (*read_component)(void *state, ecs_entity e, ecs_json_reader *r);

    /* [main-thread] `count` components are about to be read (a scene load, a reload's
     * migration: once, before the first read_component or load_component of them; not
     * inside the load, so scene_resolve and scene_error answer ECS_ERR_WRONG_TIME): make
     * room for that many more now, so the values go straight into place instead of the
     * arrays growing step by step. A hint: the reads follow whatever it did, and the
     * manager still grows when it must. Optional. */
    void (*reserve)(void *state, uint32_t count);

    /* [main-thread] Take entity e's component(s) away, as the plugin's own code would
     * (the inspector's "remove"; the host announces nothing: e lives on). ECS_OK, also
     * when e had none; ECS_ERR_STALE_ENTITY for a dead e. Optional (ABI 1.1): without it
     * a tool cannot remove this manager's components. */
    ecs_status (*remove_component)(void *state, ecs_entity e);

    /* -- ABI 1.1: binary snapshots (read only when struct_size covers them) --
     *
     * A snapshot is the whole world as bytes (docs/snapshot-format.md): the host keeps
     * its own part (entities, signatures) and asks each manager for its state. A manager
     * that offers these three gives its arrays as they are, the fast way (ecs_soa.h has
     * helpers); one that does not is snapshotted through its JSON write and read, slower
     * but the same world. Taken and restored at a frame boundary only. */

    /* The version of the bytes snapshot_write writes: a snapshot whose bytes for this
     * manager carry another version is not given to snapshot_read (a snapshot file is
     * refused, naming the manager; one in memory across a reload goes through JSON, as
     * a migration does). Bump it whenever the layout of the bytes changes. */
    uint32_t snapshot_version;
    /* [main-thread] How many bytes snapshot_write would write now. */
    size_t (*snapshot_size)(void *state);
    /* [main-thread] Write the manager's whole state into out[0..size), size being what
     * snapshot_size just returned (no call in between changes the manager). ECS_OK, or an
     * error: the snapshot fails, naming the manager. */
    ecs_status (*snapshot_write)(void *state, void *out, size_t size);
    /* [main-thread] Replace the manager's whole state by in[0..size), bytes an earlier
     * snapshot_write of the same snapshot_version wrote (checksummed by the host; the
     * host restored its entities first, so the ids in it are alive again). Report
     * nothing to the host (component_added: the host restores signatures itself). On
     * error (bytes it cannot use) return ECS_ERR_BAD_VALUE and hold no component. */
    ecs_status (*snapshot_read)(void *state, const void *in, size_t size);
} ecs_manager_desc;

/* Does manager desc d offer binary snapshots (all three callbacks, struct_size covering
 * them)? */
static inline bool ecs_manager_snapshots(const ecs_manager_desc *d)
{
    size_t need = offsetof(ecs_manager_desc, snapshot_read) + sizeof d->snapshot_read;
    return d->struct_size >= need && d->snapshot_size && d->snapshot_write && d->snapshot_read;
}

/* ---- Views, collections and systems -------------------------------------------------
 *
 * A view visits the entities present in every manager of `with` and in none of
 * `without`, without knowing how those managers store data: it walks the dense entity
 * list of the smallest `with` manager and tests the others (their signature bits when
 * they report them, else their has()); when every manager of the query reports its bits
 * and that list is not sparse, it walks the signature bits themselves, in entity index
 * order. The order of a view is not otherwise promised. Managers opt in by offering an
 * ecs_manager_index.
 * A collection is the same query kept by the host: each entity has a signature, a bitset
 * with one bit per manager (managers report adds and removes), and a collection holds the
 * entities whose signature has every `with` bit and no `without` bit. Collections change
 * only at the start of a frame, so a system sees a stable set during the frame. A system
 * is a function the host runs over a collection, in the same ordered list as the
 * managers' updates: registration order, except that a higher weight runs earlier, timed
 * like a manager. */

typedef struct ecs_manager_index {
    uint32_t struct_size;
    void *state;
    /* Does e have the manager's component? */
    bool (*has)(void *state, ecs_entity e);
    /* The entities with the component, each once, in *out; returns how many. Valid until
     * the manager changes. */
    uint32_t (*entities)(void *state, const ecs_entity **out);
    /* True when the manager reports every add and remove of its component through
     * component_added / component_removed (with the bit of its own name), so the host's
     * signatures say what has() says: views then test the signature bits inline instead
     * of calling has() per entity. Leave false when unsure: views stay right, only slower. */
    bool signature;
} ecs_manager_index;

typedef struct ecs_query_desc {
    uint32_t struct_size;
    const char *const *with;    /* NULL-terminated manager names: at least one */
    const char *const *without; /* NULL-terminated manager names, or NULL */
} ecs_query_desc;

/* A view being walked: filled by view_init, advanced by view_next. The caller owns it
 * (on the stack is fine); it must not be used after the managers it reads change. */
typedef struct ecs_view {
    const ecs_entity *list; /* the smallest `with` manager's entities, or NULL */
    uint32_t count, next;   /* where the walk is: the host's, like host[] */
    void *host[8];          /* the host's own */
} ecs_view;

/* A collection handle; 0 is none. */
typedef uint32_t ecs_collection;

typedef struct ecs_system_desc {
    uint32_t struct_size;
    const char *name; /* unique among systems and managers */
    ecs_query_desc query;
    int32_t weight; /* higher runs earlier; 0 keeps registration order */
    void *state;
    /* [frame] Run over the collection's entities (valid during the call). */
    void (*run)(void *state, const ecs_entity *entities, uint32_t count,
                const ecs_frame_info *frame);
} ecs_system_desc;

/* ---- Jobs ---------------------------------------------------------------------------
 *
 * Fork-join over the host's worker threads (ecs_host.parallel_for and run_tasks; ABI 1.1):
 * a call cuts the work into chunks, runs them on the workers and on the calling thread at
 * once, and returns when every chunk is done, so a manager's update, a system, a load() or a
 * scene read may spread its work over the machine's cores and still end before the next
 * step starts (steps keep their order: parallelism is inside a step). `thread` says which
 * thread runs a chunk: 0 is the calling thread, 1 .. job_threads - 1 the workers
 * (ecs-job-N), so scratch space per thread is an array of ecs_job_threads(h) entries. Chunks
 * run in no promised order, each exactly once, and two chunks of one call may run at the
 * same time: they must write disjoint data. Inside a job only calls tagged [job] may be made
 * (no entities made or destroyed, nothing registered, published, logged or allocated); a
 * job calling another is refused and reported. Workers sleep when there is nothing to do
 * and never run between frames: reloads, scene saves and the inspector's requests happen
 * when no job runs. Under --safe a crash in a job, on any thread, is caught there: the call
 * returns ECS_ERR_PLUGIN, and the plugin is rolled back or unloaded as for a crash in the
 * step that called it. */

/* Items [begin, end) of a parallel_for, on thread `thread`. */
typedef void (*ecs_job_fn)(void *ctx, uint32_t begin, uint32_t end, uint32_t thread);

/* One task of run_tasks: fn(ctx, thread). */
typedef struct ecs_task {
    void (*fn)(void *ctx, uint32_t thread);
    void *ctx;
} ecs_task;

/* ---- Plugin-wide state ---------------------------------------------------------------
 *
 * State outside components (ecs_host.plugin_state): JSON the plugin writes and reads
 * itself, kept by the host beside its components. */
typedef struct ecs_plugin_state_desc {
    uint32_t struct_size; /* sizeof(ecs_plugin_state_desc) as the plugin was built */
    void *state;          /* passed back to write and read */
    /* [main-thread] Write the plugin's state as one JSON value through w (an object is
     * usual), or nothing when there is nothing to keep. No entity references: entity()
     * fails the write (an id is a component's business). */
    ecs_status (*write)(void *state, ecs_json_writer *w);
    /* [main-thread] Take the state from the one value r stands before (the same reader
     * rules as read_component; no entity()). On error leave the state as it was and
     * return the error: a scene load then fails, a migration is refused. */
    ecs_status (*read)(void *state, ecs_json_reader *r);
} ecs_plugin_state_desc;

/* ---- The host table ---------------------------------------------------------------
 *
 * One table per plugin, built by the host, valid from the call to the plugin's load()
 * until its unload() returns. Every function takes the table itself as its first
 * argument: that is how the host knows which plugin is calling (for logs, allocation
 * counts and ownership of what it registers). Read struct_size before using a field
 * added in a later minor version. */

struct ecs_host {
    uint32_t struct_size; /* sizeof(ecs_host) as the host was built */
    uint16_t abi_major;
    uint16_t abi_minor;

    /* The generation byte of every entity index, for ecs_alive(). The address never
     * changes while the host runs. [main-thread] */
    const uint8_t *generations;

    /* The current frame. Never NULL. */
    const ecs_frame_info *frame;

    /* -- entities [main-thread] -- */

    /* Create one entity into *out. ECS_ERR_FULL (and *out = null) when every index is in
     * use. */
    ecs_status (*entity_create)(const ecs_host *h, ecs_entity *out);
    /* Create n entities into out[0..n). All or nothing: on ECS_ERR_FULL none is made. */
    ecs_status (*entity_create_many)(const ecs_host *h, ecs_entity *out, uint32_t n);
    /* Destroy e. A dead, stale or null id changes nothing: ECS_ERR_STALE_ENTITY. The
     * entity is dead at once; managers hear of it after this frame's updates. */
    ecs_status (*entity_destroy)(const ecs_host *h, ecs_entity e);
    /* Destroy every live id of list[0..n); stale ones are skipped. Returns
     * ECS_ERR_STALE_ENTITY if any was skipped, ECS_OK otherwise. */
    ecs_status (*entity_destroy_many)(const ecs_host *h, const ecs_entity *list, uint32_t n);
    /* Exact liveness, through a call: the same answer as the inline ecs_alive(). */
    bool (*entity_alive)(const ecs_host *h, ecs_entity e);

    /* -- managers -- */

    /* [load] Register a component manager. The desc is copied; desc->name must be unique
     * among loaded managers (else ECS_ERR_EXISTS). Managers are updated in the order they
     * were registered; a reloaded plugin's managers keep their place. */
    ecs_status (*register_manager)(const ecs_host *h, const ecs_manager_desc *desc);

    /* -- named, versioned APIs: how plugins talk to each other -- */

    /* [load] Publish api[0..size) under name (for example "ecs.transform") at version.
     * The host copies the bytes into storage it owns; when the plugin is reloaded, the
     * new version publishes again and the host rewrites that storage in place, so the
     * pointers other plugins hold stay valid. ECS_ERR_EXISTS if another plugin publishes
     * the name. */
    ecs_status (*api_publish)(const ecs_host *h, const char *name, uint32_t version,
                              const void *api, size_t size);
    /* [main-thread] Find a published API with version >= min_version. Returns the host's
     * copy (valid until the host exits, even across reloads of its provider) and its
     * size in *size (may be NULL), or NULL when there is none. */
    const void *(*api_find)(const ecs_host *h, const char *name, uint32_t min_version,
                            size_t *size);

    /* -- logging [main-thread] -- */

    /* Log a message; the host prefixes the plugin's name and filters by level. */
    void (*log)(const ecs_host *h, ecs_log_level level, const char *fmt, ...) ECS_PRINTF(3, 4);
    void (*logv)(const ecs_host *h, ecs_log_level level, const char *fmt, va_list ap);

    /* -- memory [main-thread]: counted per plugin, reported as a leak at unload -- */

    /* Like malloc/realloc/free, 16-byte aligned. NULL on failure (and for size 0 in
     * alloc). free(NULL) does nothing; freeing a pointer the host did not hand out is
     * refused with an error log, never a crash. Memory stays counted to the plugin that
     * allocated it, across reloads. */
    void *(*alloc)(const ecs_host *h, size_t size);
    void *(*realloc)(const ecs_host *h, void *ptr, size_t size);
    void (*free)(const ecs_host *h, void *ptr);

    /* -- scenes -- */

    /* [scene-load] The entity a scene id refers to (for references such as a parent).
     * If the scene gives that entity a component of the calling manager too, it is
     * loaded first, so a child may come before its parent in the file. ECS_ERR_NOT_FOUND
     * when the scene has no such id, ECS_ERR_CYCLE when the references loop (the host
     * reports both with the file position); ECS_ERR_WRONG_TIME outside a scene load. */
    ecs_status (*scene_resolve)(const ecs_host *h, const char *scene_id, ecs_entity *out);
    /* [scene-save] The scene id under which e is saved, valid until the save ends; NULL
     * outside a save or for a dead entity. */
    const char *(*scene_id_of)(const ecs_host *h, ecs_entity e);
    /* [scene-load] Say what is wrong with `at`, a value inside (or equal to) the json
     * load_component() received, then return an error from load_component(). The host
     * reports it with file, line, column and JSON path, for example
     * "demo.json:12:20: entities[3].transform.scale: expected 3 numbers". The first
     * error of a load is reported. Outside a scene load the message is logged as is. */
    void (*scene_error)(const ecs_host *h, const struct cJSON *at, const char *fmt, ...)
        ECS_PRINTF(3, 4);

    /* -- the plugin itself -- */

    /* The plugin's own name and its configuration object from the manifest (NULL when
     * it has none). Valid while the plugin is loaded. */
    const char *plugin_name;
    const struct cJSON *config;

    /* -- views, collections, systems (see above) -- */

    /* [load] Offer the index of `manager` (one this plugin registers) for views. */
    ecs_status (*manager_index)(const ecs_host *h, const char *manager,
                                const ecs_manager_index *index);
    /* [main-thread] The signature bit of a manager, for component_added/removed. The
     * bit of a name never changes while the host runs, across reloads too. */
    ecs_status (*signature_bit)(const ecs_host *h, const char *manager, uint32_t *bit);
    /* [main-thread] A manager reports that e gained or lost its component. Collections
     * see the change at the start of the next frame. (Destroyed entities lose every
     * bit by themselves.) */
    void (*component_added)(const ecs_host *h, uint32_t bit, ecs_entity e);
    void (*component_removed)(const ecs_host *h, uint32_t bit, ecs_entity e);
    /* [main-thread] Start walking a view: ECS_ERR_NOT_FOUND when a `with` manager offers
     * no index, ECS_ERR_INVALID_ARGUMENT for an empty `with`. */
    ecs_status (*view_init)(const ecs_host *h, const ecs_query_desc *query, ecs_view *v);
    /* [main-thread] The next entity of the view into *out; false at the end. */
    bool (*view_next)(const ecs_host *h, ecs_view *v, ecs_entity *out);
    /* [load] A collection kept for this query (the same query twice gives the same one). */
    ecs_status (*collection_create)(const ecs_host *h, const ecs_query_desc *query,
                                    ecs_collection *out);
    /* [main-thread] The collection's entities as of the start of this frame; returns how
     * many (0 for an unknown collection). */
    uint32_t (*collection_entities)(const ecs_host *h, ecs_collection c, const ecs_entity **out);
    /* [load] Register a system; it runs every frame in the ordered list. A reloaded
     * plugin's systems replace its old ones in place. */
    ecs_status (*register_system)(const ecs_host *h, const ecs_system_desc *desc);

    /* The alive key of every entity index (its generation + 256 while an entity holds it,
     * else 0), for the exact inline ecs_alive(). The address never changes while the host
     * runs. [main-thread] */
    const uint16_t *alive_keys;

    /* [main-thread] Up to max next entities of the view into out[0..max); returns how many,
     * 0 at the end. The same entities as view_next, one call per batch: the fast way to
     * walk a view (no call per entity). */
    uint32_t (*view_next_many)(const ecs_host *h, ecs_view *v, ecs_entity *out, uint32_t max);

    /* -- ABI 1.1: read struct_size first (or call ecs_on_commit below, which does) -- */

    /* [load] Two-phase adoption. A load() runs beside the running build, and the host may
     * still refuse the new build after it returned ECS_OK (a registration refused, an API
     * a running plugin uses withdrawn, a failed migration, a state it cannot trust): then
     * the old build keeps running with its state, so a load() that adopts a state
     * (previous_state) must leave it exactly as the old build uses it. What adopting
     * changes in it (a counter, a pointer to this build's functions or static data, a
     * buffer swapped in) goes into fn: the host calls fn(h, arg, true) once it has
     * accepted this load (registrations committed, components migrated, at the frame
     * boundary, before any of this build's callbacks run, after the old build's
     * unload()), or fn(h, arg, false) once it refused it: free what you prepared and
     * leave the state alone; unload() follows (ECS_UNLOAD_RELOAD_KEEP_STATE for an
     * adopted state). Exactly one call for each load() that returned ECS_OK and
     * registered fn; none after a load() that failed or crashed. One fn per load: a
     * second call replaces the first. A fresh load (no previous state) may use it too. */
    ecs_status (*on_commit)(const ecs_host *h,
                            void (*fn)(const ecs_host *h, void *arg, bool accepted), void *arg);

    /* [load] Offer the plugin-wide state: what the plugin keeps outside components (a
     * counter, a random seed, settings), as one JSON value written and read through the
     * host's writer and reader. The host then keeps it wherever it keeps components: in
     * scene files, under the plugin's name in the top-level "plugins" object (saved, and
     * read back at a scene load after the components); through a reload that migrates
     * through JSON (the old build writes it, the new one reads it after the components);
     * and while the plugin is away (parked, disabled, unloaded after a crash: read again
     * when it loads). desc is copied; one per plugin (ECS_ERR_EXISTS for a second). A
     * reload with the same state_version hands the state itself over, as always. */
    ecs_status (*plugin_state)(const ecs_host *h, const ecs_plugin_state_desc *desc);

    /* -- jobs (ABI 1.1, see "Jobs" above; ecs_parallel_for() below reads struct_size) -- */

    /* [main-thread] [job] Run fn over items [0, count) in chunks of grain items (0: the
     * host picks, about four chunks a thread; it may make a chunk larger, never smaller
     * than grain but for the last), on the workers and this thread at once; returns when
     * every chunk has run. With --threads 1, a count within one grain, or from inside a job,
     * it is one call fn(ctx, 0, count, thread) on this thread. ECS_OK (count 0: no call);
     * ECS_ERR_INVALID_ARGUMENT for a NULL fn; ECS_ERR_WRONG_TIME from a thread of the
     * plugin's own; ECS_ERR_PLUGIN when a chunk crashed under --safe (the chunks not yet
     * started were skipped). */
    ecs_status (*parallel_for)(const ecs_host *h, uint32_t count, uint32_t grain, ecs_job_fn fn,
                               void *ctx);
    /* [main-thread] [job] Run tasks[0..n) (copied before it returns) at once, each on one
     * thread, and return when all are done: a handful of different pieces of work side by
     * side. The statuses of parallel_for; a task with a NULL fn refuses the call (none run). */
    ecs_status (*run_tasks)(const ecs_host *h, const ecs_task *tasks, uint32_t n);
    /* [main-thread] [job] The threads that run jobs, this one included (1: no workers):
     * the `thread` a chunk gets is below it, and it does not change while the host runs. */
    uint32_t (*job_threads)(const ecs_host *h);
};

/* Register fn for the outcome of this load() (ecs_host.on_commit). On a host built before
 * ABI 1.1, which has no on_commit, fn(h, arg, true) runs at once: such a host adopts as
 * it always did. Returns on_commit's status, or ECS_OK. */
static inline ecs_status
ecs_on_commit(const ecs_host *h, void (*fn)(const ecs_host *h, void *arg, bool accepted), void *arg)
{
    size_t need = offsetof(ecs_host, on_commit) + sizeof h->on_commit;
    if (h->struct_size >= need && h->on_commit) return h->on_commit(h, fn, arg);
    fn(h, arg, true);
    return ECS_OK;
}

/* Does h run jobs (parallel_for, run_tasks, job_threads)? A host built before them does
 * not; ecs_parallel_for() and the two below then run the work on the calling thread. */
static inline bool ecs_host_has_jobs(const ecs_host *h)
{
    size_t need = offsetof(ecs_host, job_threads) + sizeof h->job_threads;
    return h->struct_size >= need && h->parallel_for && h->run_tasks && h->job_threads;
}

/* h->parallel_for(h, count, grain, fn, ctx), or on a host without jobs one call
 * fn(ctx, 0, count, 0) (none for count 0; ECS_ERR_INVALID_ARGUMENT for a NULL fn). */
static inline ecs_status ecs_parallel_for(const ecs_host *h, uint32_t count, uint32_t grain,
                                          ecs_job_fn fn, void *ctx)
{
    if (ecs_host_has_jobs(h)) return h->parallel_for(h, count, grain, fn, ctx);
    if (!fn) return ECS_ERR_INVALID_ARGUMENT;
    if (count) fn(ctx, 0, count, 0);
    return ECS_OK;
}

/* h->run_tasks(h, tasks, n), or on a host without jobs each task in turn on this thread. */
static inline ecs_status ecs_run_tasks(const ecs_host *h, const ecs_task *tasks, uint32_t n)
{
    if (ecs_host_has_jobs(h)) return h->run_tasks(h, tasks, n);
    for (uint32_t i = 0; i < n; i++)
        if (!tasks[i].fn) return ECS_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < n; i++) tasks[i].fn(tasks[i].ctx, 0);
    return ECS_OK;
}

/* h->job_threads(h), or 1 on a host without jobs: the size of per-thread scratch arrays. */
static inline uint32_t ecs_job_threads(const ecs_host *h)
{
    return ecs_host_has_jobs(h) ? h->job_threads(h) : 1u;
}

/* Does h offer views, collections and systems (the entries from manager_index to
 * register_system)? A host built for an older minor, or a test host, may not. */
static inline bool ecs_host_has_queries(const ecs_host *h)
{
    size_t end = offsetof(ecs_host, register_system) + sizeof h->register_system;
    return h->struct_size >= end && h->manager_index && h->signature_bit && h->component_added &&
           h->component_removed && h->view_init && h->view_next && h->collection_create &&
           h->collection_entities && h->register_system;
}

/* True when e is alive, exactly (see "Entities" above): one 16-bit load through the host's
 * stable alive keys, no call. */
static inline bool ecs_alive(const ecs_host *h, ecs_entity e)
{
    return ecs_alive_exact_in(h->alive_keys, e);
}

/* True when e's generation matches the host's byte for its index: one load, not exact
 * (see "Entities" above for its horizon). */
static inline bool ecs_alive_gen(const ecs_host *h, ecs_entity e)
{
    return ecs_alive_in(h->generations, e);
}

/* A view walked one entity at a time at the speed of batches: ecs_view_cursor_init, then
 * ecs_view_cursor_next until it returns false. The same entities in the same order as
 * view_next, but the cursor takes them from the host ECS_VIEW_CURSOR_BATCH at a time
 * (view_next_many) into its own array, so most steps are two loads, not a call. Header
 * only: the ABI is view_init and view_next_many. The cursor is yours (on the stack is
 * fine: about 1.1 KB) and, like the view inside it, must not be used after the
 * managers it reads change. On a host without view_next_many, each step is a view_next. */
#define ECS_VIEW_CURSOR_BATCH 256

typedef struct ecs_view_cursor {
    ecs_view view;
    uint32_t at, got; /* batch[at..got): taken from the host, not handed out yet */
    ecs_entity batch[ECS_VIEW_CURSOR_BATCH];
} ecs_view_cursor;

/* Start walking the view of query: view_init's status (a refused view is empty), or
 * ECS_ERR_UNSUPPORTED on a host without views (!ecs_host_has_queries: the cursor is empty
 * then too, and no step calls the host). */
static inline ecs_status ecs_view_cursor_init(const ecs_host *h, const ecs_query_desc *query,
                                              ecs_view_cursor *c)
{
    if (c) c->at = c->got = 0;
    if (!ecs_host_has_queries(h)) {
        if (c) c->at = 1; /* at > got: ended */
        return ECS_ERR_UNSUPPORTED;
    }
    return h->view_init(h, query, c ? &c->view : NULL); /* NULL: refused, and said */
}

/* A helper of the SDK's own kept out of line (where the compiler allows saying so), so the
 * inline function calling it stays small in the caller's loop. */
#if defined(__GNUC__) || defined(__clang__)
#define ECS_OUT_OF_LINE static __attribute__((noinline, unused))
#else
#define ECS_OUT_OF_LINE static inline
#endif

/* ecs_view_cursor_next's rare part, kept out of the caller's loop: the next batch into the
 * cursor (one entity through view_next on a host without view_next_many); false at the
 * end, and from then on without a call. */
ECS_OUT_OF_LINE bool ecs_view_cursor_fill(const ecs_host *h, ecs_view_cursor *c)
{
    size_t need = offsetof(ecs_host, view_next_many) + sizeof h->view_next_many;
    uint32_t got = 0;
    if (c->at <= c->got && ecs_host_has_queries(h))
        got = h->struct_size >= need && h->view_next_many
                  ? h->view_next_many(h, &c->view, c->batch, ECS_VIEW_CURSOR_BATCH)
                  : h->view_next(h, &c->view, &c->batch[0]);
    if (got == 0 || got > ECS_VIEW_CURSOR_BATCH) {
        c->at = 1, c->got = 0; /* ended */
        return false;
    }
    c->at = 0, c->got = got;
    return true;
}

/* A misused cursor (NULL, or NULL out): refused, and said, by the host's view_next. */
ECS_OUT_OF_LINE bool ecs_view_cursor_refused(const ecs_host *h, ecs_view_cursor *c, bool out)
{
    ecs_entity e;
    return ecs_host_has_queries(h) && h->view_next(h, c ? &c->view : NULL, out ? &e : NULL);
}

/* The next entity of the view into *out; false at the end. */
static inline bool ecs_view_cursor_next(const ecs_host *h, ecs_view_cursor *c, ecs_entity *out)
{
    if (!c || !out) return ecs_view_cursor_refused(h, c, out != NULL);
    if (c->at >= c->got && !ecs_view_cursor_fill(h, c)) return false;
    *out = c->batch[c->at++];
    return true;
}

/* ---- The plugin description ------------------------------------------------------- */

/* Why unload() is called. */
typedef enum ecs_unload_reason {
    ECS_UNLOAD_SHUTDOWN = 0,          /* the host is exiting or the plugin is removed: free all */
    ECS_UNLOAD_RELOAD_KEEP_STATE = 1, /* `state` stays with another build: a new version
                                         with the same state_version took it over, or this
                                         build adopted it and was refused. Do not free it */
    ECS_UNLOAD_RELOAD_MIGRATED = 2    /* the new version loaded the data from JSON: free all */
} ecs_unload_reason;

/* What load() receives besides the host table. */
typedef struct ecs_load_args {
    uint32_t struct_size;
    /* Non-NULL when this load replaces an older version of the same plugin whose
     * state_version equals this one's: the plugin must adopt this state (the value the
     * old version's load() stored in *state) instead of making a new one, and register
     * its managers again with the same names. Until the host accepts the new build the
     * old one still runs on this state: change it only in the function given to
     * ecs_on_commit() (two-phase adoption, above). */
    void *previous_state;
} ecs_load_args;

/* The state a reload hands over (args->previous_state), or NULL for a fresh load; reads
 * the field only when args' struct_size covers it. */
static inline void *ecs_load_args_previous_state(const ecs_load_args *args)
{
    size_t need = offsetof(ecs_load_args, previous_state) + sizeof args->previous_state;
    return args && args->struct_size >= need ? args->previous_state : NULL;
}

typedef struct ecs_plugin_desc {
    uint32_t struct_size; /* sizeof(ecs_plugin_desc) as the plugin was built */
    uint16_t abi_major;   /* ECS_ABI_MAJOR as the plugin was built */
    uint16_t abi_minor;   /* ECS_ABI_MINOR as the plugin was built */
    const char *name;     /* unique plugin name: [a-z0-9_]+ */
    const char *version;  /* free text, for example "1.2.0" */
    /* Version of the layout of the plugin's state. A reload to a build with the same
     * value hands the old state over (when the recorded layouts agree, state_size below);
     * a different value migrates through JSON: the old version's managers write every
     * component (write_component, else save_component), the new version's read them
     * (read_component, else load_component), and the plugin's own state goes the same way
     * (ecs_host.plugin_state). A plugin that cannot migrate says so by leaving those out:
     * a reload that changes its state_version is then refused, and the old version keeps
     * running. */
    uint32_t state_version;
    /* NULL-terminated list of plugin names this one needs loaded first (or NULL). */
    const char *const *dependencies;

    /* [main-thread] Set up: register managers, publish APIs, find the APIs of
     * dependencies. Store the plugin's state pointer (may be NULL) in *state. A load() that
     * adopts a state handed over (ecs_load_args.previous_state) changes it only once the
     * host accepted the build (ecs_on_commit: the host can still refuse it after load()
     * returned ECS_OK, and then the old build runs on that state). On error,
     * free what was allocated and return the status: the host then drops every
     * registration the plugin made, destroys the entities it created, frees what is still
     * counted to it, and skips it; unload() is not called. A refused registration
     * (register_manager, register_system, api_publish) fails the whole load: if load()
     * still returns ECS_OK, the host calls unload(ECS_UNLOAD_SHUTDOWN) so the state is
     * freed, then does the same. */
    ecs_status (*load)(const ecs_host *h, const ecs_load_args *args, void **state);
    /* [main-thread] Tear down. Registrations are dropped by the host. */
    void (*unload)(const ecs_host *h, void *state, ecs_unload_reason reason);

    /* -- ABI 1.1 (read by the host only when struct_size covers them) -- */

    /* The layout of the state behind the plugin's state pointer, as this build lays it
     * out: its size in bytes and a hash of its fields' offsets and sizes (0: not
     * recorded). Fill both with ECS_STATE_LAYOUT(type, field, ...) below. A reload to a
     * build with the same state_version hands it the old state only when the two
     * recorded layouts agree: a changed layout under the same state_version is refused
     * with one line that says to bump state_version, and the old build keeps running
     * with every component. A build that records nothing (0, or built for ABI 1.0) is
     * trusted as before. */
    uint32_t state_size;
    uint32_t state_hash;
} ecs_plugin_desc;

/* ECS_STATE_LAYOUT(type, field, ...): the two layout fields of ecs_plugin_desc for the
 * plugin's state struct `type`: its size, and a hash over the offset and size of each
 * field named (1 to 32 of them; name every field, or at least those whose place a
 * change would move). Constant expressions, so they fit a static const (or constexpr)
 * description, positional or by name:
 *     static const ecs_plugin_desc d = {ECS_PLUGIN_DESC_HEADER, "turn", "1.0.0", 1, NULL,
 *                                       turn_load, turn_unload,
 *                                       ECS_STATE_LAYOUT(turn, layout, host, soa, map)};
 *     ... .state_size = ECS_STATE_SIZE(turn), .state_hash = ECS_STATE_HASH(turn, layout, soa)
 * The hash sees where fields are and how big, not their types: a float turned into an
 * int32_t in place changes nothing it can see (bump state_version for that). A plugin
 * without a state struct says ECS_STATE_NONE (nothing recorded). */
#define ECS_STATE_SIZE(type) ((uint32_t)sizeof(type))
#define ECS_STATE_HASH(type, ...)                                                                  \
    ECS_STATE_CAT_(ECS_STATE_H, ECS_STATE_NARG_(__VA_ARGS__))(2166136261u, type, __VA_ARGS__)
#define ECS_STATE_LAYOUT(type, ...) ECS_STATE_SIZE(type), ECS_STATE_HASH(type, __VA_ARGS__)
#define ECS_STATE_NONE              0u, 0u

/* The machinery of ECS_STATE_HASH: FNV-1a over each field's offset and size, in 32-bit
 * unsigned arithmetic (wraps, never overflows), one step per field named. */
#define ECS_STATE_CAT_(a, b)  ECS_STATE_CAT2_(a, b)
#define ECS_STATE_CAT2_(a, b) a##b
#define ECS_STATE_NARG_(...)                                                                       \
    ECS_STATE_NTH_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,    \
                   16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define ECS_STATE_NTH_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, \
                       a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32,  \
                       n, ...)                                                                     \
    n
#define ECS_STATE_STEP_(h, t, f)                                                                   \
    ((uint32_t)((uint32_t)((uint32_t)((h) ^ (uint32_t)offsetof(t, f)) * 16777619u ^                \
                           (uint32_t)sizeof(((t *)0)->f)) *                                        \
                16777619u))
#define ECS_STATE_H1(h, t, f)       ECS_STATE_STEP_(h, t, f)
#define ECS_STATE_H2(h, t, f, ...)  ECS_STATE_H1(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H3(h, t, f, ...)  ECS_STATE_H2(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H4(h, t, f, ...)  ECS_STATE_H3(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H5(h, t, f, ...)  ECS_STATE_H4(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H6(h, t, f, ...)  ECS_STATE_H5(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H7(h, t, f, ...)  ECS_STATE_H6(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H8(h, t, f, ...)  ECS_STATE_H7(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H9(h, t, f, ...)  ECS_STATE_H8(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H10(h, t, f, ...) ECS_STATE_H9(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H11(h, t, f, ...) ECS_STATE_H10(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H12(h, t, f, ...) ECS_STATE_H11(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H13(h, t, f, ...) ECS_STATE_H12(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H14(h, t, f, ...) ECS_STATE_H13(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H15(h, t, f, ...) ECS_STATE_H14(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H16(h, t, f, ...) ECS_STATE_H15(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H17(h, t, f, ...) ECS_STATE_H16(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H18(h, t, f, ...) ECS_STATE_H17(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H19(h, t, f, ...) ECS_STATE_H18(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H20(h, t, f, ...) ECS_STATE_H19(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H21(h, t, f, ...) ECS_STATE_H20(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H22(h, t, f, ...) ECS_STATE_H21(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H23(h, t, f, ...) ECS_STATE_H22(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H24(h, t, f, ...) ECS_STATE_H23(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H25(h, t, f, ...) ECS_STATE_H24(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H26(h, t, f, ...) ECS_STATE_H25(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H27(h, t, f, ...) ECS_STATE_H26(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H28(h, t, f, ...) ECS_STATE_H27(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H29(h, t, f, ...) ECS_STATE_H28(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H30(h, t, f, ...) ECS_STATE_H29(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H31(h, t, f, ...) ECS_STATE_H30(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)
#define ECS_STATE_H32(h, t, f, ...) ECS_STATE_H31(ECS_STATE_STEP_(h, t, f), t, __VA_ARGS__)

/* Declare the plugin's entry point, the only symbol it exports:
 *     static const ecs_plugin_desc my_plugin = { sizeof(ecs_plugin_desc), ... };
 *     ECS_PLUGIN_EXPORT(my_plugin)
 * Build with -fvisibility=hidden so nothing else is exported, and link with -Wl,-z,defs so
 * a missing symbol fails the build rather than the load. C++ plugins: also
 * -fno-gnu-unique (or the library can never be unloaded) and noexcept callbacks (no
 * exception may cross the C ABI). docs/abi.md has the whole list. */
typedef const ecs_plugin_desc *(*ecs_plugin_entry_fn)(void);

#ifdef __cplusplus
#define ECS_EXTERN_C extern "C"
#else
#define ECS_EXTERN_C
#endif

#define ECS_PLUGIN_EXPORT(desc)                                                                    \
    ECS_EXTERN_C ECS_EXPORT const ecs_plugin_desc *ecs_plugin_entry(void);                         \
    ECS_EXTERN_C ECS_EXPORT const ecs_plugin_desc *ecs_plugin_entry(void)                          \
    {                                                                                              \
        return &(desc);                                                                            \
    }

/* The fields of a plugin description every plugin fills the same way. */
#define ECS_PLUGIN_DESC_HEADER sizeof(ecs_plugin_desc), ECS_ABI_MAJOR, ECS_ABI_MINOR

#ifdef __cplusplus
}
#endif

#endif /* ECS_PLUGIN_H */
