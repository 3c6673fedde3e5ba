/* SPDX-License-Identifier: MIT */
/* transform.c: the transform plugin: one component manager ("transform") holding a local
 * transform (position, unit rotation, scale), a world matrix and hierarchy links per
 * entity (the seed's TransformComponentManager), and the API "ecs.transform" v1
 * (transform_api.h); the SDK's "ecs.hierarchy" and "ecs.position" v1 (ecs_describe.h) for
 * tools such as the inspector.
 *
 * Data: one ecs_soa (one allocation, grown by reallocation) with, per instance i:
 *   entity[i]  the owner            local[i]  position, rotation, scale
 *   world[i]   world matrix         parent[i], first_child[i], next_sibling[i],
 *                                   prev_sibling[i]: instance numbers, ECS_SOA_NONE if none
 * and an ecs_entity_map (entity index -> instance): 124 bytes per instance and 4 per entity
 * index. Children form a doubly linked list. The marks of a batch's changed instances live
 * in scratch memory for the call (a bit each), not beside the data.
 *
 * Invariants, true whenever no call of this file is running:
 *   1. parents before children: parent[i] == NONE or parent[i] < i. It is what lets one
 *      linear pass over [lo, count) recompute every changed world matrix: a parent is
 *      final before any of its children is read (flush). It also makes the last instance
 *      a leaf.
 *   2. world[i] == TRS(local[i]) for a root, world[parent[i]] * TRS(local[i]) otherwise.
 *   3. the links agree: c is in p's child list iff parent[c] == p; map[index(entity[i])]
 *      == i + 1.
 * How each change keeps invariant 1:
 *   - add appends, after its parent.
 *   - set_parent under a parent p that comes after e: the members of e's subtree in
 *     [e, p] move behind the rest of that range, both groups keeping their order (a stable
 *     partition): O(subtree + distance between e and p). Under an earlier parent nothing
 *     moves, the common case (a parent made before its child).
 *   - removal swaps the last instance (a leaf) into the hole. If that puts it before its
 *     parent, it swaps places with its parent, and so up the ancestor chain while the
 *     node at the hole comes before its own parent (sift_up): every swap keeps all other
 *     pairs in order, so a removal costs O(depth) swaps, not a shift of the arrays.
 * Every move of instances rewrites each link that names a moved instance (relink) before
 * the data moves.
 *
 * Updates: set_local recomputes its subtree at once (a pre-order walk of the links).
 * set_local_many checks every entry first (all or nothing), then stores the locals and
 * marks their instances, and one linear pass from the lowest mark recomputes each marked
 * instance and each below one (flush_marked); a batch that is a run of consecutive
 * instances in order (the dense order instances() gives) stores and recomputes in the same
 * pass. recompute_all is that pass with every instance marked: one loop, no marks. Every
 * call recomputes before it returns. Rotations are kept bit for bit when |q|^2 is within
 * UNIT_TOLERANCE of 1 and normalized otherwise.
 *
 * Views and collections: the manager offers its index (has, and the dense entity array)
 * and reports each transform added and removed to the host's signatures, when the host
 * offers them (add_instance, remove_instance: the only places the set of entities changes).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "ecs_describe.h"
#include "ecs_math.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "transform_api.h"

#ifndef STATE_LAYOUT    /* a test build gives another to make a reload migrate through JSON */
#define STATE_LAYOUT 2u /* == state_version: checked when a state is adopted */
#endif
#define NO_BIT       UINT32_MAX /* no signatures: a host without them */
#define MANAGER_NAME "transform"
#define NONE         ECS_SOA_NONE
#define SCRATCH_KEEP 65536u /* scratch bytes kept between calls; more is freed after use */

/* The world matrices first: growing the store moves every array but the first one up to
 * its new offset (ecs_soa_reserve), so the widest one never moves. */
enum { F_WORLD, F_LOCAL, F_ENTITY, F_PARENT, F_FIRST, F_NEXT, F_PREV, F_COUNT };

typedef struct tf_state {
    uint32_t layout; /* STATE_LAYOUT */
    /* The signature bit of "transform" (NO_BIT: not reported). Set by every load(), in what
     * was padding before `host` on 64-bit targets: the layout is unchanged there. */
    uint32_t bit;
    const ecs_host *host;
    ecs_soa soa;
    ecs_entity_map map;
    void *scratch; /* from host->alloc: instance reordering, a batch's marks */
    size_t scratch_size;
} tf_state;

/* Adopting a state of an older build of the same STATE_LAYOUT reads `bit` from its padding
 * (zero from the memset), then load() sets it: the field must not move anything. */
_Static_assert(sizeof(void *) != 8 || offsetof(tf_state, host) == 8, "bit must fit the padding");

/* ---- field access ---- */

static ecs_entity *ents(const tf_state *t)
{
    return (ecs_entity *)t->soa.field[F_ENTITY];
}
static ecs_transform_local *locals(const tf_state *t)
{
    return (ecs_transform_local *)t->soa.field[F_LOCAL];
}
static ecs_mat4 *worlds(const tf_state *t)
{
    return (ecs_mat4 *)t->soa.field[F_WORLD];
}
static uint32_t *parents(const tf_state *t)
{
    return (uint32_t *)t->soa.field[F_PARENT];
}
static uint32_t *firsts(const tf_state *t)
{
    return (uint32_t *)t->soa.field[F_FIRST];
}
static uint32_t *nexts(const tf_state *t)
{
    return (uint32_t *)t->soa.field[F_NEXT];
}
static uint32_t *prevs(const tf_state *t)
{
    return (uint32_t *)t->soa.field[F_PREV];
}

/* The instance of e, or NONE (no generation check beyond the stored id). */
static uint32_t lookup(const tf_state *t, ecs_entity e)
{
    return ecs_soa_lookup(&t->soa, F_ENTITY, &t->map, e);
}

/* e's instance into *i: ECS_ERR_STALE_ENTITY when e is dead, ECS_ERR_NOT_FOUND when it has
 * no transform. */
static ecs_status find(const tf_state *t, ecs_entity e, uint32_t *i)
{
    if (!ecs_alive(t->host, e)) return ECS_ERR_STALE_ENTITY;
    *i = lookup(t, e);
    return *i == NONE ? ECS_ERR_NOT_FOUND : ECS_OK;
}

/* ---- values ---- */

static ecs_transform_local identity_local(void)
{
    ecs_transform_local l;
    l.position = ecs_vec3_make(0, 0, 0);
    l.rotation = ecs_quat_identity();
    l.scale = ecs_vec3_make(1, 1, 1);
    return l;
}

/* |q|^2 in double (no overflow or underflow for any finite float). */
static double quat_norm2(ecs_quat q)
{
    return (double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z + (double)q.w * q.w;
}

/* A rotation counts as unit when |q|^2 is within this of 1 (about 32 float ulps): such a
 * quaternion is kept bit for bit, any other one is normalized. */
#define UNIT_TOLERANCE 4e-6

typedef enum local_kind {
    LOCAL_BAD = -1,      /* a non-finite number or a zero rotation */
    LOCAL_AS_IS = 0,     /* finite, unit rotation */
    LOCAL_NORMALIZE = 1, /* finite, its rotation needs normalizing */
} local_kind;

/* Classify l. The common case (finite, unit) costs a few vector instructions and one
 * float dot product; the double-precision check runs only when that one is not sure. */
static inline local_kind local_check(const ecs_transform_local *l)
{
#if defined(__SSE2__)
    const float *f = &l->position.x; /* 10 floats: position, rotation, scale */
    __m128 a = _mm_loadu_ps(f), b = _mm_loadu_ps(f + 4), c = _mm_loadu_ps(f + 6);
    a = _mm_sub_ps(a, a), b = _mm_sub_ps(b, b), c = _mm_sub_ps(c, c); /* NaN where not finite */
    if (_mm_movemask_ps(_mm_or_ps(_mm_cmpunord_ps(a, b), _mm_cmpunord_ps(c, c)))) return LOCAL_BAD;
#else
    const ecs_quat r = l->rotation;
    if (!ecs_finite3(l->position) || !ecs_finite3(l->scale) || !isfinite(r.x) || !isfinite(r.y) ||
        !isfinite(r.z) || !isfinite(r.w))
        return LOCAL_BAD;
#endif
    const ecs_quat q = l->rotation;
    float nf = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (nf >= 1.0f - 2e-6f && nf <= 1.0f + 2e-6f) return LOCAL_AS_IS; /* float rounding: safe */
    double n = quat_norm2(q);
    if (!(n > 0.0)) return LOCAL_BAD;
    return fabs(n - 1.0) <= UNIT_TOLERANCE ? LOCAL_AS_IS : LOCAL_NORMALIZE;
}

/* *out = *in, its rotation normalized when kind says so. */
static inline void local_put(ecs_transform_local *out, const ecs_transform_local *in,
                             local_kind kind)
{
    *out = *in;
    if (kind != LOCAL_NORMALIZE) return;
    double inv = 1.0 / sqrt(quat_norm2(in->rotation));
    out->rotation.x = (float)(in->rotation.x * inv);
    out->rotation.y = (float)(in->rotation.y * inv);
    out->rotation.z = (float)(in->rotation.z * inv);
    out->rotation.w = (float)(in->rotation.w * inv);
}

/* ---- world matrices ---- */

/* *out = *a * *b for affine a and b (bottom rows 0 0 0 1). The same operation order as
 * ecs_mat4_mul without its terms that are products with b's zeros: the same bits, but for
 * the sign of a zero. SSE when the target has it (every x86-64). */
static inline void affine_mul(ecs_mat4 *out, const ecs_mat4 *a, const ecs_mat4 *b)
{
#if defined(__SSE2__)
    const __m128 a0 = _mm_loadu_ps(a->m), a1 = _mm_loadu_ps(a->m + 4);
    const __m128 a2 = _mm_loadu_ps(a->m + 8), a3 = _mm_loadu_ps(a->m + 12);
    for (int c = 0; c < 4; c++) {
        const float *bc = b->m + 4 * c;
        __m128 r =
            _mm_add_ps(_mm_mul_ps(a0, _mm_set1_ps(bc[0])), _mm_mul_ps(a1, _mm_set1_ps(bc[1])));
        r = _mm_add_ps(r, _mm_mul_ps(a2, _mm_set1_ps(bc[2])));
        if (c == 3) r = _mm_add_ps(r, a3); /* b[15] == 1 */
        _mm_storeu_ps(out->m + 4 * c, r);
    }
#else
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++)
            out->m[c * 4 + r] = a->m[r] * b->m[c * 4] + a->m[4 + r] * b->m[c * 4 + 1] +
                                a->m[8 + r] * b->m[c * 4 + 2] + (c == 3 ? a->m[12 + r] : 0.0f);
#endif
}

/* world[i] from its local and its parent's world (which must be up to date). */
static inline void compute_world(ecs_mat4 *world, const ecs_transform_local *local,
                                 const uint32_t *parent, uint32_t i)
{
    const ecs_transform_local *l = &local[i];
    ecs_mat4 trs = ecs_mat4_trs(l->position, l->rotation, l->scale);
    if (parent[i] == NONE)
        world[i] = trs;
    else
        affine_mul(&world[i], &world[parent[i]], &trs);
}

/* Recompute the world matrices of root's subtree, root included, in pre-order (a parent
 * before its children): O(subtree). */
static void update_subtree(tf_state *t, uint32_t root)
{
    ecs_mat4 *w = worlds(t);
    const ecs_transform_local *l = locals(t);
    const uint32_t *par = parents(t), *first = firsts(t), *next = nexts(t);
    compute_world(w, l, par, root);
    uint32_t x = first[root];
    while (x != NONE) {
        compute_world(w, l, par, x);
        if (first[x] != NONE) { /* down first */
            x = first[x];
            continue;
        }
        while (x != root && next[x] == NONE) x = par[x]; /* up to an unvisited sibling */
        x = x == root ? NONE : next[x];
    }
}

/* ---- the pass over the host's job threads ----
 *
 * [from, count) is cut into segments, each starting where a root is (looked for a little
 * way past an even cut), and the segments run at once (ecs_parallel_for). A segment whose
 * instances all have their parents inside it (or none) needs nothing from the others: by
 * invariant 1 its own linear pass is the serial pass's. Trees made one after the other are
 * such segments. A segment meets an instance whose parent lies before it, it stops there
 * (that parent may not be final yet) and the lowest such instance is noted: the pass then
 * goes on from it on one thread, over everything after it, as recompute_from always did.
 * Every world is computed by the same operations either way: the same bits as one thread. */

#define PAR_MIN 65536u /* instances below which the pass stays on one thread */
#define PAR_SEGMENTS                                                                               \
    64u                 /* segments at most: sixteen a thread, so that a CPU slowed by             \
                           another guest leaves the segments it cannot reach to the others */
#define ROOT_LOOK 4096u /* how far past a cut a root is looked for */

typedef struct pass_job {
    tf_state *t;
    uint32_t bound[PAR_SEGMENTS + 1]; /* segment k: [bound[k], bound[k + 1]) */
    _Atomic(uint32_t) stopped;        /* the lowest instance a segment stopped at */
} pass_job;

static void pass_segments(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    pass_job *j = (pass_job *)ctx;
    ecs_mat4 *w = worlds(j->t);
    const ecs_transform_local *l = locals(j->t);
    const uint32_t *par = parents(j->t);
    for (uint32_t k = begin; k < end; k++) {
        uint32_t lo = j->bound[k], hi = j->bound[k + 1], i = lo;
        for (; i < hi && (par[i] == NONE || par[i] >= lo); i++) compute_world(w, l, par, i);
        uint32_t was = atomic_load(&j->stopped);
        while (i < hi && i < was && !atomic_compare_exchange_weak(&j->stopped, &was, i)) {
        }
    }
}

/* Cut [from, n) into at most `segments` pieces at roots near even cuts; how many. */
static uint32_t pass_cut(const tf_state *t, pass_job *j, uint32_t from, uint32_t n,
                         uint32_t segments)
{
    const uint32_t *par = parents(t);
    uint32_t k = 0, step = (n - from) / segments;
    j->bound[k++] = from;
    for (uint32_t s = 1; s < segments; s++) {
        uint32_t at = from + s * step, stop = n - at > ROOT_LOOK ? at + ROOT_LOOK : n;
        while (at < stop && par[at] != NONE) at++; /* a root: its tree starts here */
        if (at < n && at > j->bound[k - 1]) j->bound[k++] = at;
    }
    j->bound[k] = n;
    return k;
}

/* Recompute every instance from `from` on, in order (invariant 1 makes each parent final
 * before its children are read): on the host's job threads when there are many. */
static void recompute_from(tf_state *t, uint32_t from)
{
    uint32_t n = t->soa.count, threads = ecs_job_threads(t->host);
    if (n > from && n - from >= PAR_MIN && threads > 1) {
        pass_job j = {.t = t};
        atomic_init(&j.stopped, n);
        uint32_t segments = threads * 16 < PAR_SEGMENTS ? threads * 16 : PAR_SEGMENTS;
        segments = pass_cut(t, &j, from, n, segments);
        if (ecs_parallel_for(t->host, segments, 1, pass_segments, &j) == ECS_OK)
            from = atomic_load(&j.stopped); /* the rest on this thread (n: nothing left) */
    }
    ecs_mat4 *w = worlds(t);
    const ecs_transform_local *l = locals(t);
    const uint32_t *par = parents(t);
    for (uint32_t i = from; i < n; i++) compute_world(w, l, par, i);
}

/* Bit i - lo of marks: is instance i (>= lo) marked? */
static inline bool marked(const uint64_t *marks, uint32_t lo, uint32_t i)
{
    return marks[(i - lo) >> 6] >> ((i - lo) & 63) & 1u;
}

static inline void mark(uint64_t *marks, uint32_t lo, uint32_t i)
{
    marks[(i - lo) >> 6] |= 1ull << ((i - lo) & 63);
}

/* Recompute, from instance `from` on, every marked instance and every one below a marked
 * one, in one linear pass (invariant 1 makes each parent final before its children are
 * read). marks holds a bit per instance of [lo, count), nothing before lo is marked. */
static void flush_marked(tf_state *t, uint32_t lo, uint32_t from, uint64_t *marks)
{
    ecs_mat4 *w = worlds(t);
    const ecs_transform_local *l = locals(t);
    const uint32_t *par = parents(t);
    for (uint32_t i = from, n = t->soa.count; i < n; i++) {
        uint32_t p = par[i];
        if (!marked(marks, lo, i) && (p == NONE || p < lo || !marked(marks, lo, p)))
            continue;       /* nothing changed? */
        mark(marks, lo, i); /* changed: so are its children, which come later */
        compute_world(w, l, par, i);
    }
}

/* ---- links ---- */

/* Make c the first child of p (c has no parent). */
static void link_child(tf_state *t, uint32_t c, uint32_t p)
{
    uint32_t *first = firsts(t), *next = nexts(t), *prev = prevs(t);
    parents(t)[c] = p;
    prev[c] = NONE;
    next[c] = first[p];
    if (first[p] != NONE) prev[first[p]] = c;
    first[p] = c;
}

/* Take c out of its parent's child list; c becomes a root (its world is left as it is). */
static void unlink_child(tf_state *t, uint32_t c)
{
    uint32_t *par = parents(t), *first = firsts(t), *next = nexts(t), *prev = prevs(t);
    if (par[c] == NONE) return;
    if (prev[c] != NONE)
        next[prev[c]] = next[c];
    else
        first[par[c]] = next[c];
    if (next[c] != NONE) prev[next[c]] = prev[c];
    par[c] = next[c] = prev[c] = NONE;
}

/* True when a is b or one of b's ancestors. O(depth of b). */
static bool is_ancestor_or_self(const tf_state *t, uint32_t a, uint32_t b)
{
    const uint32_t *par = parents(t);
    for (uint32_t x = b; x != NONE; x = par[x])
        if (x == a) return true;
    return false;
}

/* ---- moving instances ----
 *
 * A remap says where instances go: either a range [lo, lo + n) permuted by new_of
 * (old - lo -> new - lo), or a pair a <-> b. relink() rewrites every link that names a
 * moved instance, while the data is still in place; the caller then moves the data. */

typedef struct remap {
    uint32_t lo, n;
    const uint32_t *new_of; /* NULL: the pair a, b */
    uint32_t a, b;
} remap;

static bool remap_moves(const remap *r, uint32_t o)
{
    if (r->new_of) return o - r->lo < r->n; /* wraps for o < lo */
    return o == r->a || o == r->b;
}

/* Where instance o goes (NONE stays NONE). */
static uint32_t remap_to(const remap *r, uint32_t o)
{
    if (o == NONE || !remap_moves(r, o)) return o;
    if (r->new_of) return r->lo + r->new_of[o - r->lo];
    return o == r->a ? r->b : r->a;
}

/* The k-th instance r moves. */
static uint32_t remap_nth(const remap *r, uint32_t k)
{
    return r->new_of ? r->lo + k : (k == 0 ? r->a : r->b);
}

static uint32_t remap_size(const remap *r)
{
    return r->new_of ? r->n : 2;
}

/* Rewrite the links that name an instance r moves. Three steps, so that no list is walked
 * after a link in it was rewritten and no slot is rewritten twice: the parent link of
 * children that stay; the first-child and sibling slots of neighbours that stay (each
 * names exactly one moved instance); the moved instances' own links. */
static void relink(tf_state *t, const remap *r)
{
    uint32_t *par = parents(t), *first = firsts(t), *next = nexts(t), *prev = prevs(t);
    uint32_t n = remap_size(r);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t o = remap_nth(r, k);
        for (uint32_t c = first[o]; c != NONE; c = next[c])
            if (!remap_moves(r, c)) par[c] = remap_to(r, o);
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t o = remap_nth(r, k), to = remap_to(r, o);
        if (par[o] != NONE && prev[o] == NONE && !remap_moves(r, par[o])) first[par[o]] = to;
        if (next[o] != NONE && !remap_moves(r, next[o])) prev[next[o]] = to;
        if (prev[o] != NONE && !remap_moves(r, prev[o])) next[prev[o]] = to;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t o = remap_nth(r, k);
        par[o] = remap_to(r, par[o]);
        first[o] = remap_to(r, first[o]);
        next[o] = remap_to(r, next[o]);
        prev[o] = remap_to(r, prev[o]);
    }
}

/* Point the map of instance i's entity at i (its slot exists: no allocation). */
static void map_fix(tf_state *t, uint32_t i)
{
    (void)ecs_entity_map_set(&t->map, ents(t)[i], i);
}

/* Exchange instances a and b, links and map included. */
static void swap_instances(tf_state *t, uint32_t a, uint32_t b)
{
    remap r = {0, 0, NULL, a, b};
    relink(t, &r);
    ecs_soa_swap(&t->soa, a, b);
    map_fix(t, a);
    map_fix(t, b);
}

/* Restore invariant 1 at instance i, the one place it may be broken (i before its
 * parent): swap i with its parent, then the node now at i with its own parent, and so on.
 * Each swap puts a parent at i, before the node it replaces, whose children all come after
 * the old parent's place, so every other pair stays in order. O(depth) swaps. */
static void sift_up(tf_state *t, uint32_t i)
{
    const uint32_t *par = parents(t);
    while (par[i] != NONE && par[i] > i) swap_instances(t, i, par[i]);
}

/* Remove instance i, which has no children: swap the last instance into its place and
 * restore the order there. */
/* Tell the host that e gained (on) or lost its transform, for its signatures. */
static void report(const tf_state *t, ecs_entity e, bool on)
{
    if (t->bit == NO_BIT) return;
    if (on)
        t->host->component_added(t->host, t->bit, e);
    else
        t->host->component_removed(t->host, t->bit, e);
}

static void remove_instance(tf_state *t, uint32_t i)
{
    uint32_t last = t->soa.count - 1;
    ecs_entity gone = ents(t)[i];
    report(t, gone, false);
    unlink_child(t, i);
    if (i != last) {
        remap r = {0, 0, NULL, i, last}; /* i has no links left: only last's are rewritten */
        relink(t, &r);
    }
    ecs_soa_remove(&t->soa, i);
    (void)ecs_entity_map_set(&t->map, gone, NONE);
    if (i != last) {
        map_fix(t, i);
        sift_up(t, i);
    }
}

/* At least bytes of scratch memory, or NULL when out of memory. */
static void *scratch(tf_state *t, size_t bytes)
{
    if (bytes <= t->scratch_size) return t->scratch;
    void *p = t->host->realloc(t->host, t->scratch, bytes);
    if (!p) return NULL;
    t->scratch = p;
    t->scratch_size = bytes;
    return p;
}

static void scratch_trim(tf_state *t)
{
    if (t->scratch_size <= SCRATCH_KEEP) return;
    t->host->free(t->host, t->scratch);
    t->scratch = NULL;
    t->scratch_size = 0;
}

/* The bytes move_after() needs for the range [lo, hi]. */
static size_t move_after_bytes(const tf_state *t, uint32_t lo, uint32_t hi)
{
    size_t n = (size_t)hi - lo + 1, widest = 0;
    for (uint32_t k = 0; k < F_COUNT; k++)
        if (t->soa.size[k] > widest) widest = t->soa.size[k];
    return n * (sizeof(uint32_t) + widest);
}

/* Move every field of [lo, lo + n) to the places new_of gives, through tmp. */
static void permute_fields(tf_state *t, uint32_t lo, uint32_t n, const uint32_t *new_of, char *tmp)
{
    for (uint32_t k = 0; k < F_COUNT; k++) {
        size_t size = t->soa.size[k];
        char *base = (char *)t->soa.field[k];
        memcpy(tmp, base + (size_t)lo * size, n * size);
        for (uint32_t j = 0; j < n; j++)
            memcpy(base + (size_t)(lo + new_of[j]) * size, tmp + (size_t)j * size, size);
    }
    for (uint32_t j = 0; j < n; j++) map_fix(t, lo + j);
}

/* e, at instance lo, was just linked under the instance hi > lo: move the members of e's
 * subtree that lie in [lo, hi] behind the other instances of that range, both groups in
 * their order (a stable partition), which restores invariant 1. Scratch must hold
 * move_after_bytes(lo, hi). Returns e's new instance. */
static uint32_t move_after(tf_state *t, uint32_t lo, uint32_t hi)
{
    uint32_t n = hi - lo + 1, members = 0, stay = 0;
    uint32_t *new_of = (uint32_t *)t->scratch;
    const uint32_t *first = firsts(t), *next = nexts(t), *par = parents(t);
    memset(new_of, 0, n * sizeof *new_of);
    for (uint32_t x = lo; x != NONE;) { /* mark the subtree's members in range */
        if (x <= hi) new_of[x - lo] = 1, members++;
        if (first[x] != NONE) {
            x = first[x];
            continue;
        }
        while (x != lo && next[x] == NONE) x = par[x];
        x = x == lo ? NONE : next[x];
    }
    uint32_t moved = n - members;
    for (uint32_t j = 0; j < n; j++) new_of[j] = new_of[j] ? moved++ : stay++;
    remap r = {lo, n, new_of, 0, 0};
    relink(t, &r);
    permute_fields(t, lo, n, new_of, (char *)(new_of + n));
    return lo + (n - members);
}

/* ---- the operations, shared by the API and the manager callbacks ---- */

/* Append a transform for e (alive, without one) under instance p (NONE: a root); l must
 * not be LOCAL_BAD. ECS_ERR_NO_MEMORY changes nothing. */
static ecs_status add_instance(tf_state *t, ecs_entity e, const ecs_transform_local *l, uint32_t p,
                               uint32_t *out)
{
    uint32_t i = t->soa.count;
    /* Growing fourfold (ecs_soa_next_capacity): each element is copied a third of a time on
     * average, into a new buffer whose room stays untouched, and the world and local arrays
     * (64 and 40 bytes) sit on huge pages once they reach 4 MiB (ecs_soa_reserve). */
    if (ecs_soa_room_for_one(&t->soa) != ECS_OK) return ECS_ERR_NO_MEMORY;
    if (ecs_entity_map_set(&t->map, e, i) != ECS_OK) return ECS_ERR_NO_MEMORY;
    t->soa.count++; /* not ecs_soa_push: every field is written here, no need to zero it */
    ents(t)[i] = e;
    local_put(&locals(t)[i], l, local_check(l));
    parents(t)[i] = firsts(t)[i] = nexts(t)[i] = prevs(t)[i] = NONE;
    if (p != NONE) link_child(t, i, p);
    compute_world(worlds(t), locals(t), parents(t), i);
    report(t, e, true);
    if (out) *out = i;
    return ECS_OK;
}

/* Move instance i under instance p (NONE: make it a root), keeping its local; refuses a
 * cycle. On error nothing changes. Returns i's new instance in *out (may be NULL). */
static ecs_status reparent(tf_state *t, uint32_t i, uint32_t p, uint32_t *out)
{
    if (out) *out = i;
    if (p != NONE && is_ancestor_or_self(t, i, p)) return ECS_ERR_CYCLE;
    if (parents(t)[i] == p) return ECS_OK;
    if (p != NONE && p > i && !scratch(t, move_after_bytes(t, i, p))) return ECS_ERR_NO_MEMORY;
    unlink_child(t, i);
    if (p != NONE) link_child(t, i, p);
    if (p != NONE && p > i) {
        i = move_after(t, i, p);
        scratch_trim(t);
    }
    update_subtree(t, i);
    if (out) *out = i;
    return ECS_OK;
}

/* Remove instance i; its children become roots that keep their world matrices (their
 * locals are set from them: exact unless the world has shear, see ecs_mat4_decompose). */
static void remove_keeping_children(tf_state *t, uint32_t i)
{
    uint32_t c;
    while ((c = firsts(t)[i]) != NONE) {
        unlink_child(t, c);
        ecs_transform_local *l = &locals(t)[c];
        ecs_mat4_decompose(&worlds(t)[c], &l->position, &l->rotation, &l->scale);
        update_subtree(t, c);
    }
    remove_instance(t, i);
}

/* ---- the API (transform_api.h) ---- */

static ecs_status api_add(void *self, ecs_entity e, const ecs_transform_local *local,
                          ecs_entity parent)
{
    tf_state *t = (tf_state *)self;
    uint32_t p = NONE;
    ecs_transform_local id = identity_local();
    if (!t) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(t->host, e)) return ECS_ERR_STALE_ENTITY;
    if (lookup(t, e) != NONE) return ECS_ERR_EXISTS;
    if (local && local_check(local) == LOCAL_BAD) return ECS_ERR_BAD_VALUE;
    if (!ecs_entity_is_null(parent)) {
        ecs_status s = find(t, parent, &p);
        if (s != ECS_OK) return s;
    }
    return add_instance(t, e, local ? local : &id, p, NULL);
}

static ecs_status api_remove(void *self, ecs_entity e)
{
    tf_state *t = (tf_state *)self;
    uint32_t i;
    if (!t) return ECS_ERR_INVALID_ARGUMENT;
    ecs_status s = find(t, e, &i);
    if (s == ECS_OK) remove_keeping_children(t, i);
    return s;
}

static bool api_has(void *self, ecs_entity e)
{
    const tf_state *t = (const tf_state *)self;
    return t && ecs_alive(t->host, e) && lookup(t, e) != NONE;
}

static ecs_status api_get_local(void *self, ecs_entity e, ecs_transform_local *out)
{
    tf_state *t = (tf_state *)self;
    uint32_t i;
    if (!t || !out) return ECS_ERR_INVALID_ARGUMENT;
    ecs_status s = find(t, e, &i);
    if (s == ECS_OK) *out = locals(t)[i];
    return s;
}

static ecs_status api_get_world(void *self, ecs_entity e, ecs_mat4 *out)
{
    tf_state *t = (tf_state *)self;
    uint32_t i;
    if (!t || !out) return ECS_ERR_INVALID_ARGUMENT;
    ecs_status s = find(t, e, &i);
    if (s == ECS_OK) *out = worlds(t)[i];
    return s;
}

static ecs_status api_set_local(void *self, ecs_entity e, const ecs_transform_local *local)
{
    tf_state *t = (tf_state *)self;
    uint32_t i;
    if (!t || !local) return ECS_ERR_INVALID_ARGUMENT;
    ecs_status s = find(t, e, &i);
    if (s != ECS_OK) return s;
    local_kind kind = local_check(local);
    if (kind == LOCAL_BAD) return ECS_ERR_BAD_VALUE;
    local_put(&locals(t)[i], local, kind);
    update_subtree(t, i);
    return ECS_OK;
}

/* A large batch that may be a run: its entries checked on the host's job threads. */
typedef struct run_check {
    const tf_state *t;
    const ecs_entity *entities;
    const ecs_transform_local *in;
    uint32_t lo;
    _Atomic(uint32_t) misses; /* entries that are not the run's, dead or bad */
} run_check;

/* [job] Are entries [begin, end) the instances lo + k, alive, with good values? */
static void check_run_range(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    run_check *c = (run_check *)ctx;
    const ecs_entity *ent = ents(c->t);
    uint32_t misses = 0;
    for (uint32_t k = begin; k < end; k++)
        misses += ent[c->lo + k].id != c->entities[k].id ||
                  !ecs_alive(c->t->host, c->entities[k]) || local_check(&c->in[k]) == LOCAL_BAD;
    if (misses) atomic_fetch_add(&c->misses, misses);
}

/* Is entries[0..n) (n >= PAR_MIN) the run of instances from entries[0]'s, every entry alive
 * and good? Checked on the job threads; false sends the batch to check_many's own loop,
 * which finds what is wrong, if anything. */
static bool is_good_run(const tf_state *t, const ecs_entity *entities,
                        const ecs_transform_local *in, uint32_t n, uint32_t *lo)
{
    if (n < PAR_MIN || ecs_job_threads(t->host) < 2 || find(t, entities[0], lo) != ECS_OK ||
        t->soa.count - *lo < n)
        return false;
    run_check c = {t, entities, in, *lo, 0};
    return ecs_parallel_for(t->host, n, 16384, check_run_range, &c) == ECS_OK &&
           atomic_load(&c.misses) == 0;
}

/* Check entries[0..n) before anything changes (all or nothing). ECS_OK with *run = true
 * when they are the instances *lo, *lo + 1, ... in that order; else *lo is meaningless. On
 * error *bad (may be NULL) is the index of the first bad entry. */
static ecs_status check_many(const tf_state *t, const ecs_entity *entities,
                             const ecs_transform_local *in, uint32_t n, uint32_t *bad, uint32_t *lo,
                             bool *run)
{
    if (is_good_run(t, entities, in, n, lo)) return *run = true, ECS_OK;
    const ecs_entity *ent = ents(t);
    uint32_t i = NONE, count = t->soa.count;
    *run = true;
    *lo = NONE;
    for (uint32_t k = 0; k < n; k++) {
        ecs_status s = ECS_OK;
        if (*run && k > 0 && *lo + k < count && ent[*lo + k].id == entities[k].id) {
            i = *lo + k; /* still the run: no map read needed, only liveness */
            if (!ecs_alive(t->host, entities[k])) s = ECS_ERR_STALE_ENTITY;
        } else {
            s = find(t, entities[k], &i);
            if (k == 0) *lo = i;
            *run = *run && k == 0;
        }
        if (s == ECS_OK && local_check(&in[k]) == LOCAL_BAD) s = ECS_ERR_BAD_VALUE;
        if (s != ECS_OK) {
            if (bad) *bad = k;
            return s;
        }
    }
    return ECS_OK;
}

/* Zeroed marks for the instances [lo, count) in scratch memory, after `skip` bytes the
 * caller keeps there; NULL when memory ran out. */
static uint64_t *marks_for(tf_state *t, uint32_t lo, size_t skip)
{
    size_t words = ((size_t)t->soa.count - lo + 63) / 64, at = (skip + 7) & ~(size_t)7;
    if (!scratch(t, at + words * sizeof(uint64_t))) return NULL;
    uint64_t *marks = (uint64_t *)((char *)t->scratch + at);
    memset(marks, 0, words * sizeof *marks);
    return marks;
}

/* The batch is the instances [lo, lo + n) in order (for example the dense order of
 * instances()): store each local and recompute its world in the same pass, since its
 * parent is final already (before lo and unchanged, or earlier in the run). The run is
 * marked only when instances follow it, for the pass that carries the change to their
 * descendants. */
typedef struct run_store {
    tf_state *t;
    const ecs_transform_local *in;
    uint32_t lo;
} run_store;

/* [job] Store the locals of entries [begin, end) of a run. */
static void store_run_range(void *ctx, uint32_t begin, uint32_t end, uint32_t thread)
{
    (void)thread;
    run_store *r = (run_store *)ctx;
    ecs_transform_local *l = locals(r->t);
    for (uint32_t k = begin; k < end; k++)
        local_put(&l[r->lo + k], &r->in[k], local_check(&r->in[k]));
}

static void store_run(tf_state *t, uint32_t lo, const ecs_transform_local *in, uint32_t n)
{
    run_store r = {t, in, lo};
    if (lo + n == t->soa.count && n >= PAR_MIN && ecs_job_threads(t->host) > 1 &&
        ecs_parallel_for(t->host, n, 16384, store_run_range, &r) == ECS_OK) {
        recompute_from(t, lo); /* the same worlds as below, on the job threads too */
        return;
    }
    ecs_mat4 *w = worlds(t);
    ecs_transform_local *l = locals(t);
    const uint32_t *par = parents(t);
    for (uint32_t k = 0, i = lo; k < n; k++, i++) {
        local_put(&l[i], &in[k], local_check(&in[k]));
        compute_world(w, l, par, i);
    }
    if (lo + n == t->soa.count) return;
    uint64_t *marks = marks_for(t, lo, 0);
    if (!marks) { /* no memory for the marks: every instance after the run */
        recompute_from(t, lo + n);
        return;
    }
    for (uint32_t i = lo; i < lo + n; i++) mark(marks, lo, i);
    flush_marked(t, lo, lo + n, marks);
    scratch_trim(t);
}

static ecs_status api_set_local_many(void *self, const ecs_entity *entities,
                                     const ecs_transform_local *in, uint32_t n, uint32_t *bad)
{
    tf_state *t = (tf_state *)self;
    uint32_t lo;
    bool run;
    if (!t || (n && (!entities || !in))) {
        if (bad) *bad = 0;
        return ECS_ERR_INVALID_ARGUMENT;
    }
    ecs_status s = check_many(t, entities, in, n, bad, &lo, &run);
    if (s != ECS_OK || n == 0) return s;
    if (run) {
        store_run(t, lo, in, n);
        return ECS_OK;
    }
    ecs_transform_local *l = locals(t);
    uint32_t *inst = (uint32_t *)scratch(t, (size_t)n * sizeof *inst); /* NULL: looked up again */
    lo = NONE;
    for (uint32_t k = 0; k < n; k++) { /* store, then mark, then one pass */
        uint32_t i = lookup(t, entities[k]);
        local_put(&l[i], &in[k], local_check(&in[k]));
        if (inst) inst[k] = i;
        if (i < lo) lo = i;
    }
    uint64_t *marks = marks_for(t, lo, inst ? (size_t)n * sizeof *inst : 0);
    if (!marks) { /* no memory for the marks: every instance from lo */
        recompute_from(t, lo);
        scratch_trim(t);
        return ECS_OK;
    }
    inst = inst ? (uint32_t *)t->scratch : NULL; /* marks_for may have moved the scratch */
    for (uint32_t k = 0; k < n; k++) mark(marks, lo, inst ? inst[k] : lookup(t, entities[k]));
    flush_marked(t, lo, lo, marks);
    scratch_trim(t);
    return ECS_OK;
}

static ecs_status api_set_parent(void *self, ecs_entity e, ecs_entity parent)
{
    tf_state *t = (tf_state *)self;
    uint32_t i, p = NONE;
    if (!t) return ECS_ERR_INVALID_ARGUMENT;
    ecs_status s = find(t, e, &i);
    if (s == ECS_OK && !ecs_entity_is_null(parent)) s = find(t, parent, &p);
    return s == ECS_OK ? reparent(t, i, p, NULL) : s;
}

static ecs_status api_detach(void *self, ecs_entity e)
{
    return api_set_parent(self, e, ecs_entity_null());
}

/* The entity of the instance in link field k of e's instance; null when none. */
static ecs_entity link_of(void *self, ecs_entity e, uint32_t k)
{
    const tf_state *t = (const tf_state *)self;
    if (!t || !ecs_alive(t->host, e)) return ecs_entity_null();
    uint32_t i = lookup(t, e);
    if (i == NONE) return ecs_entity_null();
    uint32_t j = ((const uint32_t *)t->soa.field[k])[i];
    return j == NONE ? ecs_entity_null() : ents(t)[j];
}

static ecs_entity api_parent(void *self, ecs_entity e)
{
    return link_of(self, e, F_PARENT);
}
static ecs_entity api_first_child(void *self, ecs_entity e)
{
    return link_of(self, e, F_FIRST);
}
static ecs_entity api_next_sibling(void *self, ecs_entity e)
{
    return link_of(self, e, F_NEXT);
}
static ecs_entity api_prev_sibling(void *self, ecs_entity e)
{
    return link_of(self, e, F_PREV);
}

/* ecs.position: the translation of e's world matrix. */
static bool api_position(void *self, ecs_entity e, float out[3])
{
    tf_state *t = (tf_state *)self;
    uint32_t i;
    if (!t || find(t, e, &i) != ECS_OK) return false;
    const float *m = worlds(t)[i].m;
    out[0] = m[12], out[1] = m[13], out[2] = m[14];
    return true;
}

static uint32_t api_count(void *self)
{
    return self ? ((const tf_state *)self)->soa.count : 0;
}

static uint32_t api_instances(void *self, const ecs_entity **entities, const ecs_mat4 **world)
{
    const tf_state *t = (const tf_state *)self;
    if (entities) *entities = t ? ents(t) : NULL;
    if (world) *world = t ? worlds(t) : NULL;
    return t ? t->soa.count : 0;
}

/* The pass set_local_many runs, with every instance changed: every world in order. */
static uint32_t api_recompute_all(void *self)
{
    tf_state *t = (tf_state *)self;
    if (!t || t->soa.count == 0) return 0;
    recompute_from(t, 0);
    return t->soa.count;
}

/* Room for n instances in all: the store's arrays (the entity map grows with the indices). */
static ecs_status api_reserve(void *self, uint32_t n)
{
    tf_state *t = (tf_state *)self;
    if (!t || n > ECS_ENTITY_INDEX_MASK) return ECS_ERR_INVALID_ARGUMENT;
    return ecs_soa_reserve(&t->soa, n);
}

/* ---- the manager ---- */

/* [frame] Nothing to do: every call recomputes what it changed before it returns. */
static void mgr_update(void *state, const ecs_frame_info *frame)
{
    (void)state, (void)frame;
}

/* [frame] Each destroyed entity's children are destroyed too (they come back in the next
 * batch of this frame's announcement, so every manager hears of them), then its instance
 * goes. The children are unlinked without recomputing: they are dead already. */
static void mgr_entities_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    tf_state *t = (tf_state *)state;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = lookup(t, list[k]), c;
        if (i == NONE) continue;
        while ((c = firsts(t)[i]) != NONE) {
            ecs_entity child = ents(t)[c];
            if (ecs_alive(t->host, child)) t->host->entity_destroy(t->host, child);
            unlink_child(t, c);
        }
        remove_instance(t, i);
    }
}

static uint32_t mgr_count(void *state)
{
    return ((const tf_state *)state)->soa.count;
}

/* [main-thread] The entities with a transform, each once: the dense array, valid until
 * the next change. For views. */
static uint32_t mgr_entities(void *state, const ecs_entity **out)
{
    const tf_state *t = (const tf_state *)state;
    *out = ents(t);
    return t->soa.count;
}

/* ---- scenes: one transform as JSON ----
 * {"position":[x,y,z], "rotation":[x,y,z,w], "scale":[x,y,z], "parent":"<scene id>"}
 * Missing keys are the identity's values and no parent. */

/* [scene-save] Through the host's writer: the floats as their shortest round-tripping
 * text, the parent as its scene id. */
static ecs_status mgr_write(void *state, ecs_entity e, ecs_json_writer *w)
{
    tf_state *t = (tf_state *)state;
    if (!w) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(t->host, e)) return ECS_ERR_STALE_ENTITY;
    uint32_t i = lookup(t, e);
    if (i == NONE) return ECS_OK;
    const ecs_transform_local *l = &locals(t)[i];
    const float pos[3] = {l->position.x, l->position.y, l->position.z};
    const float rot[4] = {l->rotation.x, l->rotation.y, l->rotation.z, l->rotation.w};
    const float scl[3] = {l->scale.x, l->scale.y, l->scale.z};
    uint32_t p = parents(t)[i];
    w->begin_object(w);
    w->key(w, "position");
    w->array_f32(w, pos, 3);
    w->key(w, "rotation");
    w->array_f32(w, rot, 4);
    w->key(w, "scale");
    w->array_f32(w, scl, 3);
    if (p != NONE) {
        w->key(w, "parent");
        w->entity(w, ents(t)[p]);
    }
    w->end_object(w);
    return ECS_OK;
}

/* The value of "parent": a scene id resolved into *pe, or null (none: *pe stays null).
 * Resolving may load the parent's own transform first (it may come later in the scene),
 * which moves instances: the caller looks them up afterwards. ECS_OK, or the error with
 * the reader failed. */
static ecs_status read_parent(const tf_state *t, ecs_entity e, ecs_json_reader *r, ecs_entity *pe)
{
    ecs_json_type type = r->peek(r);
    if (type == ECS_JSON_NULL) return r->skip(r) ? ECS_OK : ECS_ERR_BAD_VALUE;
    if (type != ECS_JSON_STRING) {
        ecs_json_refuse(r, type, "a scene id (a string) or null");
        return ECS_ERR_BAD_VALUE;
    }
    if (!r->entity(r, pe)) return ECS_ERR_BAD_VALUE; /* the reader says why */
    if (!ecs_alive(t->host, *pe)) {
        r->error(r, "the parent cannot be resolved (%s)", ecs_status_text(ECS_ERR_STALE_ENTITY));
        return ECS_ERR_STALE_ENTITY;
    }
    if (ecs_entity_eq(*pe, e)) {
        r->error(r, "expected another entity's id, found its own");
        return ECS_ERR_CYCLE;
    }
    return ECS_OK;
}

/* [scene-load] Give e the transform r stands before. The keys come in the file's order:
 * they are read into a local and a parent first, each checked where it stands, and nothing
 * changes before the object is read whole. A parent entity without a transform yet (the
 * scene lists it later) then gets an identity one, which its own component replaces when it
 * comes. On error a transform e has already (its own, or one it got as a parent named
 * first) stays as it was. */
static ecs_status mgr_read(void *state, ecs_entity e, ecs_json_reader *r)
{
    tf_state *t = (tf_state *)state;
    ecs_transform_local l = identity_local(); /* for what is missing */
    ecs_entity pe = ecs_entity_null();
    ecs_status s = ECS_OK;
    const char *key;
    float v[4];
    uint32_t i, p = NONE;
    if (!r) return ECS_ERR_INVALID_ARGUMENT;
    if (!ecs_alive(t->host, e)) return ECS_ERR_STALE_ENTITY;
    ecs_json_type type = r->peek(r);
    if (type != ECS_JSON_OBJECT) { /* a transform it has already stays as it is */
        ecs_json_refuse(r, type,
                        "an object {\"position\": [x, y, z], \"rotation\": [x, y, z, w], "
                        "\"scale\": [x, y, z], \"parent\": \"id\"}");
        return ECS_ERR_BAD_VALUE;
    }
    r->begin_object(r);
    while (s == ECS_OK && r->key(r, &key)) {
        if (ecs_json_key_is(key, "position")) {
            if (r->array_f32(r, v, 3)) l.position = ecs_vec3_make(v[0], v[1], v[2]);
        } else if (ecs_json_key_is(key, "scale")) {
            if (r->array_f32(r, v, 3)) l.scale = ecs_vec3_make(v[0], v[1], v[2]);
        } else if (ecs_json_key_is(key, "rotation")) {
            if (!r->array_f32(r, v, 4)) continue; /* the reader failed: said where */
            l.rotation.x = v[0], l.rotation.y = v[1], l.rotation.z = v[2], l.rotation.w = v[3];
            if (!(quat_norm2(l.rotation) > 0.0)) /* at the array, just read */
                r->error(r, "expected a non-zero quaternion [x, y, z, w], found a zero one");
        } else if (ecs_json_key_is(key, "parent")) {
            s = read_parent(t, e, r, &pe);
        } else { /* kept out of the data, not an error: key() passes over its value */
            t->host->log(t->host, ECS_LOG_WARN, "unknown key \"%s\" ignored", key);
        }
    }
    if (s == ECS_OK && r->failed(r)) s = ECS_ERR_BAD_VALUE;
    if (s != ECS_OK) return s;
    if (!ecs_entity_is_null(pe) && (p = lookup(t, pe)) == NONE) {
        ecs_transform_local id = identity_local();
        if ((s = add_instance(t, pe, &id, NONE, &p)) != ECS_OK) return s;
    }
    i = lookup(t, e); /* only now: resolving the parent may have loaded others, moving instances */
    if (i == NONE) return add_instance(t, e, &l, p, NULL);
    if ((s = reparent(t, i, p, &i)) != ECS_OK) { /* a cycle (an edit), or out of memory */
        r->error(r, "%s", ecs_status_text(s));
        return s;
    }
    local_put(&locals(t)[i], &l, local_check(&l));
    update_subtree(t, i);
    return ECS_OK;
}

/* ---- the plugin ---- */

static void state_bind(tf_state *t, const ecs_host *h)
{
    t->host = h;
    t->soa.host = h;
    t->map.host = h;
}

static tf_state *state_new(const ecs_host *h)
{
    static const size_t sizes[F_COUNT] = {
        [F_WORLD] = sizeof(ecs_mat4),    [F_LOCAL] = sizeof(ecs_transform_local),
        [F_ENTITY] = sizeof(ecs_entity), [F_PARENT] = sizeof(uint32_t),
        [F_FIRST] = sizeof(uint32_t),    [F_NEXT] = sizeof(uint32_t),
        [F_PREV] = sizeof(uint32_t)};
    tf_state *t = (tf_state *)h->alloc(h, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->layout = STATE_LAYOUT;
    t->bit = NO_BIT;
    (void)ecs_soa_init(&t->soa, h, F_COUNT, sizes);
    ecs_entity_map_init(&t->map, h);
    state_bind(t, h);
    return t;
}

static void state_free(tf_state *t)
{
    ecs_soa_free(&t->soa);
    ecs_entity_map_free(&t->map);
    if (t->scratch) t->host->free(t->host, t->scratch);
    t->host->free(t->host, t);
}

/* A scene load's hint: its transforms go straight into place (no doubling on the way). */
static void mgr_reserve(void *state, uint32_t count)
{
    (void)ecs_soa_reserve_more(&((tf_state *)state)->soa, count); /* else: grows as it reads */
}

/* ---- snapshots: the arrays as they are (parents before children, links by instance) ---- */

static size_t mgr_snapshot_size(void *state)
{
    return ecs_soa_snapshot_size(&((tf_state *)state)->soa);
}

static ecs_status mgr_snapshot_write(void *state, void *out, size_t size)
{
    return ecs_soa_snapshot_put(&((tf_state *)state)->soa, out, size);
}

/* Do the links of the instances read hold (invariant 1 and indices in range), so that no
 * walk leaves the arrays? Bytes from a file may have been made by anything. */
static bool links_sane(const tf_state *t)
{
    uint32_t n = t->soa.count;
    for (uint32_t i = 0; i < n; i++)
        if ((parents(t)[i] != NONE && parents(t)[i] >= i) ||
            (firsts(t)[i] != NONE && (firsts(t)[i] <= i || firsts(t)[i] >= n)) ||
            (nexts(t)[i] != NONE && nexts(t)[i] >= n) || (prevs(t)[i] != NONE && prevs(t)[i] >= n))
            return false;
    return true;
}

/* The map is the one thing not in the bytes: rebuilt from the entity array. */
static ecs_status mgr_snapshot_read(void *state, const void *in, size_t size)
{
    tf_state *t = (tf_state *)state;
    ecs_status s = ecs_soa_snapshot_take(&t->soa, &t->map, F_ENTITY, in, size);
    if (s != ECS_OK || links_sane(t)) return s;
    return ecs_soa_snapshot_take(&t->soa, &t->map, F_ENTITY, NULL, 0); /* hold nothing */
}

static ecs_status register_all(const ecs_host *h, tf_state *t)
{
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = MANAGER_NAME,
                          .state = t,
                          .update = mgr_update,
                          .entities_destroyed = mgr_entities_destroyed,
                          .count = mgr_count,
                          .write_component = mgr_write,
                          .read_component = mgr_read,
                          .reserve = mgr_reserve,
                          .remove_component = api_remove, /* its children stay, as roots */
                          .snapshot_version = STATE_LAYOUT,
                          .snapshot_size = mgr_snapshot_size,
                          .snapshot_write = mgr_snapshot_write,
                          .snapshot_read = mgr_snapshot_read};
    ecs_status s = h->register_manager(h, &m);
    if (s != ECS_OK) return s;
    ecs_transform_api api = {sizeof api,
                             t,
                             api_add,
                             api_remove,
                             api_has,
                             api_get_local,
                             api_get_world,
                             api_set_local,
                             api_set_local_many,
                             api_set_parent,
                             api_detach,
                             api_parent,
                             api_first_child,
                             api_next_sibling,
                             api_prev_sibling,
                             api_count,
                             api_instances,
                             api_recompute_all,
                             api_reserve};
    /* and the SDK's (ecs_describe.h): tools see the tree and the places without this header */
    ecs_hierarchy_api tree = {sizeof tree, t, api_parent, api_first_child, api_next_sibling};
    ecs_position_api place = {sizeof place, t, api_position};
    s = h->api_publish(h, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, &api, sizeof api);
    if (s == ECS_OK)
        s = h->api_publish(h, ECS_HIERARCHY_API_NAME, ECS_HIERARCHY_API_VERSION, &tree,
                           sizeof tree);
    if (s == ECS_OK)
        s = h->api_publish(h, ECS_POSITION_API_NAME, ECS_POSITION_API_VERSION, &place,
                           sizeof place);
    return s;
}

/* Offer the index for views and find the signature bit (NO_BIT without them) into *bit. */
static ecs_status offer_index(const ecs_host *h, tf_state *t, uint32_t *bit)
{
    *bit = NO_BIT;
    if (!ecs_host_has_queries(h)) return ECS_OK;
    ecs_manager_index ix = {.struct_size = sizeof ix,
                            .state = t,
                            .has = api_has,
                            .entities = mgr_entities,
                            .signature = true}; /* it reports its bit */
    ecs_status s = h->manager_index(h, MANAGER_NAME, &ix);
    return s == ECS_OK ? h->signature_bit(h, MANAGER_NAME, bit) : s;
}

/* [main-thread] A new state, or the previous version's (same state_version) adopted: its
 * host pointers are rebound to this table, restored if the load fails. */
/* Two-phase adoption (ecs_on_commit): a state handed over by a reload becomes this build's
 * only once the host accepted it; a build refused after its load() leaves the running
 * build's pointers in it. */
static void transform_commit(const ecs_host *h, void *arg, bool accepted)
{
    tf_state *t = (tf_state *)arg;
    uint32_t bit = NO_BIT;
    if (!accepted) return;
    if (ecs_host_has_queries(h) && h->signature_bit(h, MANAGER_NAME, &bit) != ECS_OK) bit = NO_BIT;
    state_bind(t, h);
    t->bit = bit;
}

static ecs_status transform_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    tf_state *prev =
        args && args->struct_size >= sizeof *args ? (tf_state *)args->previous_state : NULL;
    if (prev && prev->layout != STATE_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, "the state handed over has layout %u, not %u", prev->layout,
               STATE_LAYOUT);
        return ECS_ERR_ABI;
    }
    tf_state *t = prev ? prev : state_new(h);
    if (!t) return ECS_ERR_NO_MEMORY;
    uint32_t bit = NO_BIT;
    ecs_status s = register_all(h, t);
    if (s == ECS_OK) s = offer_index(h, t, &bit);
    if (s != ECS_OK) {
        if (!prev) state_free(t);
        return s;
    }
    *state = t;
    if (prev) return ecs_on_commit(h, transform_commit, t); /* not before the host accepts */
    t->bit = bit;
    return ECS_OK;
}

/* [main-thread] Free everything, unless a new version takes the state over. */
static void transform_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    (void)h;
    if (state && reason != ECS_UNLOAD_RELOAD_KEEP_STATE) state_free((tf_state *)state);
}

static const ecs_plugin_desc transform_plugin = {
    ECS_PLUGIN_DESC_HEADER,
    "transform",
    "1.0.0",
    STATE_LAYOUT,
    NULL,
    transform_load,
    transform_unload,
    ECS_STATE_LAYOUT(tf_state, layout, bit, host, soa, map, scratch, scratch_size),
};

ECS_PLUGIN_EXPORT(transform_plugin)
