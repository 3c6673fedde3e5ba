/* debug_name.c: the debug_name plugin: at most one name per entity (the seed's
 * DebugNameComponentManager), as the manager "debug_name" (scene value: a string) and the
 * API "ecs.debug_name" v1 (debug_name_api.h).
 *
 * Data: one ecs_soa (one allocation) holding, per instance i:
 *   entity[i]  the named entity          name[i]  its name: a copy in a name slab
 *   hash[i]    FNV-1a of the name        next[i]  next instance in the same hash chain
 *   seq[i]     when the name was given (a counter that only grows)
 * an ecs_entity_map (entity index -> instance) and a chained hash table: bucket[b] is
 * the first instance whose hash & (bucket_count - 1) == b, ECS_SOA_NONE ending a chain.
 * Names live in slabs: slots of 16, 32, 64, 128 or 256 bytes (the smallest that holds the
 * name and its NUL) cut from 64 KiB chunks, a freed slot kept on its size's free list.
 * A name never moves while it is set (get() hands out its address), and a short name
 * costs its slot, not a heap block with its headers (about 64 bytes each).
 *
 * Invariants: every instance i < count is in exactly one chain, the one of hash[i];
 * map[index(entity[i])] == i + 1; bucket_count is 0 or a power of two >= count (load
 * factor <= 1, so chains are short). Several entities may share a name: find() takes
 * the highest seq among the live ones, i.e. the entity that most recently received the
 * name and still has it. Removal unlinks the instance, swaps the last instance into the
 * hole and re-points the two links that named the moved one (map slot; bucket head or
 * chain predecessor).
 *
 * Views and collections: the manager offers its index (has, and the dense entity array)
 * and reports every name given to an entity without one, and every name removed, to the
 * host's signatures (component_added / component_removed), when the host offers them.
 */
#include <stdio.h>
#include <string.h>

#include "debug_name_api.h"
#include "ecs_json.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"

#define STATE_LAYOUT  2u         /* == state_version: checked when a state is adopted */
#define SLAB_CLASSES  5u         /* name slots of 16 << k bytes, k < 5: up to 256 */
#define SLAB_CHUNK    65536u     /* bytes of a slab chunk, its link included */
#define CHUNK_HEAD    16u        /* a chunk starts with the link to the previous one */
#define NO_BIT        UINT32_MAX /* no signatures: a host without them */
#define MIN_BUCKETS   64u
#define MANAGER_NAME  "debug_name"
#define NAME_EXPECTED "a name of 1-255 bytes of UTF-8 without control characters"

enum { F_ENTITY, F_NAME, F_HASH, F_NEXT, F_SEQ, F_COUNT };

typedef struct dn_state {
    uint32_t layout; /* STATE_LAYOUT */
    /* The signature bit of "debug_name" (NO_BIT: not reported). Set by every load(), in
     * what was padding before `host` on 64-bit targets: the layout is unchanged there. */
    uint32_t bit;
    const ecs_host *host;
    ecs_soa soa;
    ecs_entity_map map;
    uint32_t *bucket; /* bucket_count heads, from host->alloc */
    uint32_t bucket_count;
    uint64_t next_seq;
    struct {
        void *free;       /* freed slots, each holding the next one's address */
        char *next, *end; /* the unused slots of the newest chunk */
        void *chunks;     /* every chunk, each holding the previous one's address */
    } slab[SLAB_CLASSES];
} dn_state;

/* Adopting a state of an older build of the same STATE_LAYOUT reads `bit` from its padding
 * (zero from the memset), then load() sets it: the field must not move anything. */
_Static_assert(sizeof(void *) != 8 || offsetof(dn_state, host) == 8, "bit must fit the padding");

/* ---- field access ---- */

static ecs_entity *ents(const dn_state *s)
{
    return (ecs_entity *)s->soa.field[F_ENTITY];
}
static char **names(const dn_state *s)
{
    return (char **)s->soa.field[F_NAME];
}
static uint32_t *hashes(const dn_state *s)
{
    return (uint32_t *)s->soa.field[F_HASH];
}
static uint32_t *nexts(const dn_state *s)
{
    return (uint32_t *)s->soa.field[F_NEXT];
}
static uint64_t *seqs(const dn_state *s)
{
    return (uint64_t *)s->soa.field[F_SEQ];
}

/* ---- names: validation and hashing ---- */

/* What is wrong with name as a debug name, or NULL when it is good: 1 to
 * ECS_DEBUG_NAME_MAX - 1 bytes of UTF-8, no control character (C0, DEL, C1). */
static const char *name_problem(const char *name)
{
    if (!name) return "the name is NULL";
    size_t len = strnlen(name, ECS_DEBUG_NAME_MAX);
    if (len == 0) return "the name is empty";
    if (len >= ECS_DEBUG_NAME_MAX) return "the name is longer than 255 bytes";
    const unsigned char *p = (const unsigned char *)name;
    for (size_t i = 0, n; i < len; i += n) {
        uint32_t cp = 0;
        if (!(n = ecs_utf8_decode(p + i, &cp))) return "the name is not valid UTF-8";
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return "the name has a control character";
    }
    return NULL;
}

static uint32_t name_hash(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    return h;
}

/* The slab class of a name of len bytes (its slot: 16 << class bytes, the NUL included). */
static unsigned slab_class(size_t len)
{
    unsigned k = 0;
    while ((16u << k) < len + 1) k++;
    return k; /* < SLAB_CLASSES: names are at most 255 bytes */
}

/* A slot for a name of len bytes; NULL when memory ran out. */
static char *slot_take(dn_state *s, size_t len)
{
    unsigned k = slab_class(len);
    size_t size = 16u << k;
    char *slot = (char *)s->slab[k].free;
    if (slot) {
        memcpy(&s->slab[k].free, slot, sizeof(void *));
        return slot;
    }
    if ((size_t)(s->slab[k].end - s->slab[k].next) < size) { /* a new chunk */
        char *chunk = (char *)s->host->alloc(s->host, SLAB_CHUNK);
        if (!chunk) return NULL;
        memcpy(chunk, &s->slab[k].chunks, sizeof(void *));
        s->slab[k].chunks = chunk;
        s->slab[k].next = chunk + CHUNK_HEAD;
        s->slab[k].end = chunk + SLAB_CHUNK;
    }
    slot = s->slab[k].next;
    s->slab[k].next += size;
    return slot;
}

/* Give name's slot back to its free list. */
static void slot_give(dn_state *s, char *name)
{
    unsigned k = slab_class(strlen(name));
    memcpy(name, &s->slab[k].free, sizeof(void *));
    s->slab[k].free = name;
}

/* Free every chunk of every slab. */
static void slabs_free(dn_state *s, const ecs_host *h)
{
    for (unsigned k = 0; k < SLAB_CLASSES; k++) {
        void *chunk = s->slab[k].chunks;
        while (chunk) {
            void *prev;
            memcpy(&prev, chunk, sizeof prev);
            h->free(h, chunk);
            chunk = prev;
        }
    }
}

/* A copy of name in a slab slot; NULL when memory ran out. */
static char *copy_name(dn_state *s, const char *name)
{
    size_t len = strlen(name);
    char *copy = slot_take(s, len);
    if (copy) memcpy(copy, name, len + 1);
    return copy;
}

/* ---- the hash chains ---- */

/* The link (bucket head or chain successor) that holds instance i in the chain of hash
 * h. i must be in that chain. */
static uint32_t *link_to(dn_state *s, uint32_t h, uint32_t i)
{
    uint32_t *link = &s->bucket[h & (s->bucket_count - 1)];
    while (*link != i) link = &nexts(s)[*link];
    return link;
}

static void chain_insert(dn_state *s, uint32_t i)
{
    uint32_t *head = &s->bucket[hashes(s)[i] & (s->bucket_count - 1)];
    nexts(s)[i] = *head;
    *head = i;
}

static void chain_unlink(dn_state *s, uint32_t i)
{
    *link_to(s, hashes(s)[i], i) = nexts(s)[i];
}

/* Make the table hold at least `need` instances at load factor <= 1. Rebuilds every
 * chain into a new bucket array. ECS_ERR_NO_MEMORY leaves everything as it was. */
static ecs_status buckets_reserve(dn_state *s, uint32_t need)
{
    if (need <= s->bucket_count) return ECS_OK;
    uint32_t count = s->bucket_count ? s->bucket_count : MIN_BUCKETS;
    while (count < need) {
        if (count > UINT32_MAX / 2) return ECS_ERR_NO_MEMORY;
        count *= 2;
    }
    uint32_t *bucket = (uint32_t *)s->host->alloc(s->host, (size_t)count * sizeof *bucket);
    if (!bucket) return ECS_ERR_NO_MEMORY;
    memset(bucket, 0xFF, (size_t)count * sizeof *bucket); /* every head ECS_SOA_NONE */
    if (s->bucket) s->host->free(s->host, s->bucket);
    s->bucket = bucket;
    s->bucket_count = count;
    for (uint32_t i = 0; i < s->soa.count; i++) chain_insert(s, i);
    return ECS_OK;
}

/* ---- instances ---- */

/* Tell the host that e gained (on) or lost its name, for its signatures. */
static void report(const dn_state *s, ecs_entity e, bool on)
{
    if (s->bit == NO_BIT) return;
    if (on)
        s->host->component_added(s->host, s->bit, e);
    else
        s->host->component_removed(s->host, s->bit, e);
}

/* e's instance (e alive and named), or ECS_SOA_NONE. */
static uint32_t instance_of(const dn_state *s, ecs_entity e)
{
    if (!ecs_alive(s->host, e)) return ECS_SOA_NONE;
    return ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
}

/* Remove instance i: unlink it, free its name, move the last instance into its place. */
static void remove_instance(dn_state *s, uint32_t i)
{
    chain_unlink(s, i);
    slot_give(s, names(s)[i]);
    report(s, ents(s)[i], false);
    ecs_entity_map_set(&s->map, ents(s)[i], ECS_SOA_NONE);
    uint32_t moved = ecs_soa_remove(&s->soa, i);
    if (moved == ECS_SOA_NONE) return;          /* i was the last one */
    *link_to(s, hashes(s)[i], moved) = i;       /* its chain still names the old slot */
    ecs_entity_map_set(&s->map, ents(s)[i], i); /* an existing slot: cannot fail */
}

/* A new instance for e (its other fields zero, not chained yet). ECS_SOA_NONE when
 * memory ran out (then nothing changed). */
static uint32_t add_instance(dn_state *s, ecs_entity e)
{
    if (buckets_reserve(s, s->soa.count + 1) != ECS_OK) return ECS_SOA_NONE;
    uint32_t i = ecs_soa_push(&s->soa);
    if (i == ECS_SOA_NONE) return ECS_SOA_NONE;
    if (ecs_entity_map_set(&s->map, e, i) != ECS_OK) {
        s->soa.count--; /* the pushed instance was the last one */
        return ECS_SOA_NONE;
    }
    ents(s)[i] = e;
    report(s, e, true);
    return i;
}

/* Log a refused call and return its status. */
static ecs_status refuse(const dn_state *s, ecs_status st, const char *call, ecs_entity e,
                         const char *why)
{
    s->host->log(s->host, ECS_LOG_ERROR, "%s: entity %u.%u: %s (%s)", call, ecs_entity_index(e),
                 ecs_entity_generation(e), why, ecs_status_text(st));
    return st;
}

/* ---- the API ---- */

/* Name e, replacing its name. ECS_ERR_STALE_ENTITY (dead e), ECS_ERR_INVALID_ARGUMENT
 * (NULL name), ECS_ERR_BAD_VALUE (bad name), ECS_ERR_NO_MEMORY; on error nothing changes
 * and one line is logged. */
static ecs_status dn_set(void *self, ecs_entity e, const char *name)
{
    dn_state *s = (dn_state *)self;
    if (!ecs_alive(s->host, e)) return refuse(s, ECS_ERR_STALE_ENTITY, "set", e, "not alive");
    const char *problem = name_problem(name);
    if (problem)
        return refuse(s, name ? ECS_ERR_BAD_VALUE : ECS_ERR_INVALID_ARGUMENT, "set", e, problem);
    char *copy = copy_name(s, name);
    if (!copy) return refuse(s, ECS_ERR_NO_MEMORY, "set", e, "out of memory");
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i != ECS_SOA_NONE) { /* replacing: leave the old name's chain */
        chain_unlink(s, i);
        slot_give(s, names(s)[i]);
    } else if ((i = add_instance(s, e)) == ECS_SOA_NONE) {
        slot_give(s, copy);
        return refuse(s, ECS_ERR_NO_MEMORY, "set", e, "out of memory");
    }
    names(s)[i] = copy;
    hashes(s)[i] = name_hash(copy);
    seqs(s)[i] = s->next_seq++;
    chain_insert(s, i);
    return ECS_OK;
}

/* e's name, or NULL (no name, dead e). Valid until e's name changes or e is destroyed. */
static const char *dn_get(void *self, ecs_entity e)
{
    dn_state *s = (dn_state *)self;
    uint32_t i = instance_of(s, e);
    return i == ECS_SOA_NONE ? NULL : names(s)[i];
}

/* Remove e's name. ECS_ERR_STALE_ENTITY for a dead e, ECS_ERR_NOT_FOUND without one. */
static ecs_status dn_clear(void *self, ecs_entity e)
{
    dn_state *s = (dn_state *)self;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i == ECS_SOA_NONE) return ECS_ERR_NOT_FOUND;
    remove_instance(s, i);
    return ECS_OK;
}

/* The live entity that most recently received name and still has it; the null entity
 * when there is none (also for a NULL or invalid name). One chain walk: O(1) expected. */
static ecs_entity dn_find(void *self, const char *name)
{
    dn_state *s = (dn_state *)self;
    ecs_entity best = ecs_entity_null();
    if (!name || s->bucket_count == 0) return best;
    uint32_t h = name_hash(name);
    uint64_t best_seq = 0;
    for (uint32_t i = s->bucket[h & (s->bucket_count - 1)]; i != ECS_SOA_NONE; i = nexts(s)[i]) {
        if (hashes(s)[i] != h || strcmp(names(s)[i], name) != 0) continue;
        if (!ecs_alive(s->host, ents(s)[i])) continue; /* destroyed, not yet announced */
        if (ecs_entity_is_null(best) || seqs(s)[i] > best_seq) {
            best = ents(s)[i];
            best_seq = seqs(s)[i];
        }
    }
    return best;
}

/* Write "name#index.gen" ("#index.gen" without a name) into buf, truncated to size
 * bytes (always terminated when size > 0). Returns buf. */
static const char *dn_format(void *self, ecs_entity e, char *buf, size_t size)
{
    if (!buf || size == 0) return buf;
    const char *name = dn_get(self, e);
    snprintf(buf, size, "%s#%u.%u", name ? name : "", ecs_entity_index(e),
             ecs_entity_generation(e));
    return buf;
}

static uint32_t dn_count(void *self)
{
    return ((const dn_state *)self)->soa.count;
}

/* [main-thread] Does e have a name? For views. */
static bool dn_has(void *self, ecs_entity e)
{
    return instance_of((const dn_state *)self, e) != ECS_SOA_NONE;
}

/* [main-thread] The named entities, each once: the dense array, valid until a name is
 * given or removed. For views. */
static uint32_t dn_entities(void *self, const ecs_entity **out)
{
    const dn_state *s = (const dn_state *)self;
    *out = ents(s);
    return s->soa.count;
}

/* ---- the manager ---- */

/* Forget the names of destroyed entities (their ids are already dead). */
static void dn_entities_destroyed(void *state, const ecs_entity *list, uint32_t count)
{
    dn_state *s = (dn_state *)state;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, list[k]);
        if (i != ECS_SOA_NONE) remove_instance(s, i);
    }
}

/* e's name as a JSON string through w (nothing when e has none). ECS_ERR_INVALID_ARGUMENT
 * for a NULL w, ECS_ERR_STALE_ENTITY for a dead e. */
static ecs_status dn_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    dn_state *s = (dn_state *)state;
    if (!w) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(s->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = ecs_soa_lookup(&s->soa, F_ENTITY, &s->map, e);
    if (i != ECS_SOA_NONE) w->string(w, names(s)[i]);
    return ECS_OK;
}

/* Name e from the scene value r stands before: a JSON string. On error e is left without a
 * name; a bad value fails the reader (the host adds file, line, column and JSON path) with
 * what was expected: ECS_ERR_BAD_VALUE, ECS_ERR_STALE_ENTITY, ECS_ERR_INVALID_ARGUMENT (NULL
 * r), ECS_ERR_NO_MEMORY. */
static ecs_status dn_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    dn_state *s = (dn_state *)state;
    const char *call = "read_component", *name = NULL, *problem = "";
    if (!ecs_alive(s->host, e)) return refuse(s, ECS_ERR_STALE_ENTITY, call, e, "not alive");
    if (!r) return refuse(s, ECS_ERR_INVALID_ARGUMENT, call, e, "the reader is NULL");
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_STRING)
        r->skip(r); /* the value is the one read last: the error points at it */
    else if (r->string(r, &name, NULL))
        problem = name_problem(name); /* valid until the next call on r: dn_set copies it */
    ecs_status st = ECS_ERR_BAD_VALUE;
    if (problem)
        r->error(r, "expected " NAME_EXPECTED ", found %s%s%s", ecs_json_type_text(type),
                 *problem ? ": " : "", problem);
    else
        st = dn_set(s, e, name);
    if (st != ECS_OK) dn_clear(s, e); /* the contract: no component after an error */
    return st;
}

/* ---- plugin life ---- */

/* Point every stored host pointer at h (a reload hands the state to a new table). */
static void bind_host(dn_state *s, const ecs_host *h)
{
    s->host = h;
    s->soa.host = h;
    s->map.host = h;
}

static void state_free(dn_state *s, const ecs_host *h)
{
    bind_host(s, h);
    slabs_free(s, h);
    ecs_soa_free(&s->soa);
    ecs_entity_map_free(&s->map);
    if (s->bucket) h->free(h, s->bucket);
    h->free(h, s);
}

/* A new, empty state; NULL when memory ran out. */
static dn_state *state_new(const ecs_host *h)
{
    dn_state *s = (dn_state *)h->alloc(h, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->layout = STATE_LAYOUT;
    s->bit = NO_BIT;
    s->host = h;
    const size_t sizes[F_COUNT] = {sizeof(ecs_entity), sizeof(char *), sizeof(uint32_t),
                                   sizeof(uint32_t), sizeof(uint64_t)};
    ecs_soa_init(&s->soa, h, F_COUNT, sizes);
    ecs_entity_map_init(&s->map, h);
    return s;
}

/* Offer the index for views and find the signature bit (NO_BIT without them) into *bit. */
static ecs_status offer_index(const ecs_host *h, dn_state *s, uint32_t *bit)
{
    *bit = NO_BIT;
    if (!ecs_host_has_queries(h)) return ECS_OK;
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = s,
                            .has = dn_has,
                            .entities = dn_entities,
                            .signature = true}; /* it reports its bit */
    ecs_status st = h->manager_index(h, MANAGER_NAME, &ix);
    return st == ECS_OK ? h->signature_bit(h, MANAGER_NAME, bit) : st;
}

/* Register the manager and publish the API for state s. */
static ecs_status register_all(const ecs_host *h, dn_state *s)
{
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = MANAGER_NAME,
                          .state = s,
                          .entities_destroyed = dn_entities_destroyed,
                          .count = dn_count,
                          .write_component = dn_write,
                          .read_component = dn_read};
    ecs_debug_name_api api = {sizeof api, s,       dn_set,    dn_get,
                              dn_clear,   dn_find, dn_format, dn_count};
    ecs_status st = h->register_manager(h, &m);
    if (st == ECS_OK)
        st = h->api_publish(h, ECS_DEBUG_NAME_API_NAME, ECS_DEBUG_NAME_API_VERSION, &api,
                            sizeof api);
    return st;
}

/* [main-thread] Make (or adopt) the state, register "debug_name", publish the API. On
 * error a new state is freed; an adopted one is left untouched for the old version. */
static ecs_status dn_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    dn_state *s = (dn_state *)ecs_load_args_previous_state(args);
    bool adopted = s != NULL;
    if (adopted && s->layout != STATE_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, "load: the previous state has layout %u, expected %u", s->layout,
               STATE_LAYOUT);
        return ECS_ERR_ABI;
    }
    if (!adopted && !(s = state_new(h))) return ECS_ERR_NO_MEMORY;
    uint32_t bit = NO_BIT;
    ecs_status st = register_all(h, s);
    if (st == ECS_OK) st = offer_index(h, s, &bit);
    if (st != ECS_OK) {
        if (!adopted) state_free(s, h);
        return st;
    }
    bind_host(s, h); /* only now: a failed reload leaves the old version's pointers */
    s->bit = bit;
    *state = s;
    return ECS_OK;
}

/* [main-thread] Free everything, except for a reload that keeps the state. */
static void dn_unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    if (!state || why == ECS_UNLOAD_RELOAD_KEEP_STATE) return; /* the next version adopts it */
    state_free((dn_state *)state, h);
}

static const char *const no_dependencies[] = {NULL};

static const ecs_plugin_desc debug_name_plugin = {
    ECS_PLUGIN_DESC_HEADER, "debug_name", "1.0.0",   STATE_LAYOUT,
    no_dependencies,        dn_load,      dn_unload,
};

ECS_PLUGIN_EXPORT(debug_name_plugin)
