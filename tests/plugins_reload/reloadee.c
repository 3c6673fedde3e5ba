/* SPDX-License-Identifier: MIT */
/* reloadee.c: the test plugin of the hot-reload tests (test_reload.c) and of ecs-bench's
 * R1, built as many versions from this one source with -D flags.
 *
 * Plugin RL_NAME (default "rl") with one manager of the same name: one integer value per
 * entity, scene value a JSON number. Each update adds RL_STEP to every value, so a saved
 * scene shows which code ran for how long: value = start + sum over the versions that ran
 * of (their step x their updates), and each version logs its update count at unload.
 * The state layout is RL_LAYOUT (== state_version): 1 keeps {entity, value} pairs in one
 * array, 2 keeps two arrays and its fields in another order, so 1 -> 2 must migrate
 * through JSON. Entity index -> position + 1 in `slot` (0: none).
 *
 * Build flags:
 *   RL_NAME="x"     plugin and manager name (default "rl")
 *   RL_VERSION="v"  version string, in every log line (default "1")
 *   RL_STEP=n       added to each value per update (default 1)
 *   RL_RANDOM       each update adds a number below 100 drawn from the frame's seed
 *                   (ecs_random_next from frame->seed) instead: a run that depends on it
 *   RL_LAYOUT=1|2   state layout and state_version (default 1)
 *   RL_STREAM       write_component/read_component (the host's JSON writer and reader)
 *                   instead of save_component/load_component (cJSON trees)
 *   RL_NO_JSON      no save_component/load_component: cannot migrate; a fresh load makes
 *                   RL_OWN entities with values 1000, 2000, ... itself
 *   RL_NO_API       do not publish "test.reloadee" (a second plugin of this source)
 *   RL_BAD_ABI      built for ABI major + 1: the host must refuse it
 *   RL_ABI_1_0      built as for ABI 1.0: a description without the state layout
 *   RL_LOAD_FAILS   load() fails with ECS_ERR_PLUGIN after registering its manager
 *   RL_CRASH_AT=n   update crashes with SIGSEGV from frame n on (a crashing build)
 *   RL_CRASH_IN_LOAD       load() calls abort() (SIGABRT) before touching anything
 *   RL_CRASH_IN_MIGRATION  load_component raises SIGFPE (a migration that crashes)
 *   RL_CRASH_IN_RESERVE    reserve raises SIGSEGV (the hint before a load crashes)
 *   RL_CRASH_IN_UNLOAD     unload() raises SIGSEGV at exit (ECS_UNLOAD_SHUTDOWN), after its
 *                          log line and before freeing its state
 *   RL_CRASH_IN_SAVE       save_component / write_component raise SIGSEGV
 *   RL_CRASH_IN_COUNT      count() raises SIGSEGV
 *   RL_MIGRATION_LIMIT=n   load_component refuses a value over n (a migration that fails)
 *   RL_API_NAME="x" the name of the API it publishes (default "test.reloadee")
 *   RL_NEEDS="x"    declares a dependency on plugin x
 *   RL_USES="api"   finds API "api" (RL_USES_MIN, default 1) with api_find in load(), which
 *                   fails without it (ECS_ERR_NOT_FOUND); every update and unload() call its
 *                   count(), so the provider's code runs while this plugin does
 *   RL_API_VERSION=n  the version it publishes its API at (default 1)
 *   RL_API_PAD=n    its API struct is n bytes longer (an API grown past the host's room)
 *   RL_API_FIRST="x"  publishes a second API "x" before its own (a commit's first)
 *   RL_ADOPT_FAILS  load() fails (after registering) when it is handed a state: a fresh
 *                   load works, taking a state over (a reload, a rollback) does not
 *   RL_IGNORES_REFUSAL  load() publishes its API twice, and returns ECS_OK although the
 *                   host refused the second
 *   RL_USES_LATE    finds RL_USES in an update instead (a lazy find), not in load(), and
 *                   calls it only while it is there (a withdrawn API reads as zeros)
 *
 * Log lines (info), "rl 1" standing for RL_NAME RL_VERSION:
 *   "rl 1 load: new state" | "rl 1 load: adopted the previous state (reload K), N components"
 *   "rl 1 commit: refused, the state left as it was" (a build refused after adopting)
 *   "rl 1 first update: frame F, step S"
 *   "rl 1 reserve: N coming, H held; scene_resolve: STATUS" (before a load's reads)
 *   "rl 1 unload (shutdown|keep state|migrated): U updates run, N components"
 *   with RL_USES: "rl 1 load: found API (provider has N components)" | "rl 1 load: no API",
 *   "rl 1 found API late" (RL_USES_LATE), "rl 1 unload: its provider has N components"
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_plugin.h"
#include "reloadee_api.h"
#include "unload_reason.h"

#ifndef RL_NAME
#define RL_NAME "rl"
#endif
#ifndef RL_VERSION
#define RL_VERSION "1"
#endif
#ifndef RL_STEP
#define RL_STEP 1
#endif
#ifndef RL_LAYOUT
#define RL_LAYOUT 1
#endif
#ifndef RL_OWN
#define RL_OWN 3
#endif
#ifndef RL_API_NAME
#define RL_API_NAME RELOADEE_API_NAME
#endif
#ifndef RL_USES_MIN
#define RL_USES_MIN 1u
#endif
#ifndef RL_API_VERSION
#define RL_API_VERSION RELOADEE_API_VERSION
#endif
#ifndef RL_API_PAD
#define RL_API_PAD 1
#endif
#define WHO RL_NAME " " RL_VERSION

#if RL_LAYOUT == 1
typedef struct rl_item {
    ecs_entity e;
    int64_t value;
} rl_item;

typedef struct rl_state {
    uint32_t layout; /* RL_LAYOUT: checked when a state is adopted */
    uint32_t count, cap;
    const ecs_host *host;
    rl_item *items;
    uint32_t *slot;
    uint32_t slot_cap;
    uint32_t reloads; /* same-layout reloads this state went through */
} rl_state;

#define ENTITY(s, i) ((s)->items[i].e)
#define VALUE(s, i)  ((s)->items[i].value)

/* Room for cap items. ECS_ERR_NO_MEMORY leaves s as it was. */
static ecs_status reserve_items(rl_state *s, uint32_t cap)
{
    rl_item *v = s->host->realloc(s->host, s->items, (size_t)cap * sizeof *v);
    if (!v) return ECS_ERR_NO_MEMORY;
    s->items = v;
    s->cap = cap;
    return ECS_OK;
}

static void free_items(rl_state *s)
{
    s->host->free(s->host, s->items);
}
#elif RL_LAYOUT == 2
typedef struct rl_state {
    uint32_t layout; /* RL_LAYOUT: checked when a state is adopted */
    uint32_t reloads;
    const ecs_host *host;
    uint32_t *slot;
    int64_t *values;
    ecs_entity *owners;
    uint32_t slot_cap, count, cap;
} rl_state;

#define ENTITY(s, i) ((s)->owners[i])
#define VALUE(s, i)  ((s)->values[i])

/* Room for cap items. ECS_ERR_NO_MEMORY leaves the capacity as it was. */
static ecs_status reserve_items(rl_state *s, uint32_t cap)
{
    int64_t *v = s->host->realloc(s->host, s->values, (size_t)cap * sizeof *v);
    if (!v) return ECS_ERR_NO_MEMORY;
    s->values = v;
    ecs_entity *o = s->host->realloc(s->host, s->owners, (size_t)cap * sizeof *o);
    if (!o) return ECS_ERR_NO_MEMORY;
    s->owners = o;
    s->cap = cap;
    return ECS_OK;
}

static void free_items(rl_state *s)
{
    s->host->free(s->host, s->values);
    s->host->free(s->host, s->owners);
}
#else
#error "RL_LAYOUT is 1 or 2"
#endif

static uint64_t updates_run; /* by this copy of the code: each dlopen starts at 0 */
#ifdef RL_USES
static const reloadee_api *used; /* RL_USES of the provider, from api_find */
#ifdef RL_USES_LATE
#define USED_THERE (used->count != NULL)
#else
#define USED_THERE true /* found in load(): the host keeps its provider while this runs */
#endif

/* Find RL_USES; true when found. */
static bool find_used(const ecs_host *h)
{
    used = h->api_find(h, RL_USES, RL_USES_MIN, NULL);
    return used != NULL;
}
#endif

/* ---- the components ---- */

/* The position of e's component, or -1. */
static long find(const rl_state *s, ecs_entity e)
{
    uint32_t idx = ecs_entity_index(e);
    if (idx >= s->slot_cap || !s->slot[idx]) return -1;
    uint32_t i = s->slot[idx] - 1;
    return ecs_entity_eq(ENTITY(s, i), e) ? (long)i : -1;
}

/* Room in slot for entity indices below n. */
static ecs_status reserve_slots(rl_state *s, uint32_t n)
{
    if (n <= s->slot_cap) return ECS_OK;
    uint32_t cap = s->slot_cap ? s->slot_cap : 1024;
    while (cap < n) cap *= 2;
    uint32_t *v = s->host->realloc(s->host, s->slot, (size_t)cap * sizeof *v);
    if (!v) return ECS_ERR_NO_MEMORY;
    memset(v + s->slot_cap, 0, (size_t)(cap - s->slot_cap) * sizeof *v);
    s->slot = v;
    s->slot_cap = cap;
    return ECS_OK;
}

/* Give e the value. ECS_ERR_EXISTS when it has one, ECS_ERR_NO_MEMORY. */
static ecs_status add(rl_state *s, ecs_entity e, int64_t value)
{
    if (find(s, e) >= 0) return ECS_ERR_EXISTS;
    ecs_status st = reserve_slots(s, ecs_entity_index(e) + 1);
    if (st == ECS_OK && s->count == s->cap) st = reserve_items(s, s->cap ? s->cap * 2 : 64);
    if (st != ECS_OK) return st;
    ENTITY(s, s->count) = e;
    VALUE(s, s->count) = value;
    s->slot[ecs_entity_index(e)] = ++s->count;
    return ECS_OK;
}

/* Remove position i: the last component moves into the hole. */
static void remove_at(rl_state *s, uint32_t i)
{
    uint32_t last = --s->count;
    s->slot[ecs_entity_index(ENTITY(s, i))] = 0;
    if (i == last) return;
    ENTITY(s, i) = ENTITY(s, last);
    VALUE(s, i) = VALUE(s, last);
    s->slot[ecs_entity_index(ENTITY(s, i))] = i + 1;
}

/* ---- the manager ---- */

static void mgr_update(void *state, const ecs_frame_info *frame)
{
    rl_state *s = state;
#ifdef RL_CRASH_AT
    /* a crash from frame RL_CRASH_AT on: the signal a wild store gets, without the UB
     * (UBSan would end the process itself) */
    if (frame->frame + 1 > RL_CRASH_AT) raise(SIGSEGV);
#endif
#if defined(RL_USES) && defined(RL_USES_LATE)
    if (!used && find_used(s->host)) s->host->log(s->host, ECS_LOG_INFO, WHO " found API late");
#endif
#ifdef RL_USES
    if (used && USED_THERE) (void)used->count(used->self); /* into the provider's code */
#endif
    if (updates_run++ == 0)
        s->host->log(s->host, ECS_LOG_INFO, WHO " first update: frame %llu, step %d",
                     (unsigned long long)frame->frame, RL_STEP);
#ifdef RL_RANDOM
    uint64_t x = frame->seed;
    for (uint32_t i = 0; i < s->count; i++) VALUE(s, i) += (int)(ecs_random_next(&x) % 100u);
#else
    for (uint32_t i = 0; i < s->count; i++) VALUE(s, i) += RL_STEP;
#endif
}

static void mgr_destroyed(void *state, const ecs_entity *list, uint32_t n)
{
    rl_state *s = state;
    for (uint32_t k = 0; k < n; k++) {
        long i = find(s, list[k]);
        if (i >= 0) remove_at(s, (uint32_t)i);
    }
}

static uint32_t mgr_count(void *state)
{
#ifdef RL_CRASH_IN_COUNT
    raise(SIGSEGV);
#endif
    return ((rl_state *)state)->count;
}

/* The load's hint: room for `count` more, said in the log with what is held and whether a
 * host function of the load itself (scene_resolve) answers here (it must not). */
static void mgr_reserve(void *state, uint32_t count)
{
#ifdef RL_CRASH_IN_RESERVE
    raise(SIGSEGV);
#endif
    rl_state *s = state;
    ecs_entity e;
    ecs_status st = s->host->scene_resolve(s->host, "e1", &e);
    s->host->log(s->host, ECS_LOG_INFO, WHO " reserve: %u coming, %u held; scene_resolve: %s",
                 count, s->count, ecs_status_text(st));
    if (count <= UINT32_MAX - s->count && s->count + count > s->cap)
        (void)reserve_items(s, s->count + count);
}

#ifndef RL_NO_JSON
static ecs_status mgr_save(void *state, ecs_entity e, cJSON **out)
{
#ifdef RL_CRASH_IN_SAVE
    raise(SIGSEGV);
#endif
    rl_state *s = state;
    long i = find(s, e);
    *out = NULL;
    if (i < 0) return ECS_OK;
    *out = cJSON_CreateNumber((double)VALUE(s, i));
    return *out ? ECS_OK : ECS_ERR_NO_MEMORY;
}

#ifdef RL_STREAM
static ecs_status mgr_write(void *state, ecs_entity e, ecs_json_writer *w)
{
#ifdef RL_CRASH_IN_SAVE
    raise(SIGSEGV);
#endif
    rl_state *s = state;
    long i = find(s, e);
    if (i >= 0) w->number(w, (double)VALUE(s, i));
    return ECS_OK;
}

static ecs_status mgr_read(void *state, ecs_entity e, ecs_json_reader *r)
{
#ifdef RL_CRASH_IN_MIGRATION
    raise(SIGFPE);
#endif
    rl_state *s = state;
    double v = NAN;
    if (!r->number(r, &v)) return ECS_ERR_BAD_VALUE;
    if (!(fabs(v) <= 9007199254740992.0) || v != floor(v)) { /* 2^53: exact in a double */
        r->error(r, "expected a whole number");
        return ECS_ERR_BAD_VALUE;
    }
#ifdef RL_MIGRATION_LIMIT
    if (v > RL_MIGRATION_LIMIT) {
        r->error(r, "expected at most %d, found %.0f", RL_MIGRATION_LIMIT, v);
        return ECS_ERR_BAD_VALUE;
    }
#endif
    ecs_status st = add(s, e, (int64_t)v);
    if (st != ECS_OK) r->error(r, "%s", ecs_status_text(st));
    return st;
}
#endif

static ecs_status mgr_load(void *state, ecs_entity e, const cJSON *json)
{
#ifdef RL_CRASH_IN_MIGRATION
    raise(SIGFPE);
#endif
    rl_state *s = state;
    double v = cJSON_IsNumber(json) ? json->valuedouble : NAN;
    if (!(fabs(v) <= 9007199254740992.0) || v != floor(v)) { /* 2^53: exact in a double */
        s->host->scene_error(s->host, json, "expected a whole number");
        return ECS_ERR_BAD_VALUE;
    }
#ifdef RL_MIGRATION_LIMIT
    if (v > RL_MIGRATION_LIMIT) {
        s->host->scene_error(s->host, json, "expected at most %d, found %.0f", RL_MIGRATION_LIMIT,
                             v);
        return ECS_ERR_BAD_VALUE;
    }
#endif
    ecs_status st = add(s, e, (int64_t)v);
    if (st != ECS_OK) s->host->scene_error(s->host, json, "%s", ecs_status_text(st));
    return st;
}
#endif

/* ---- the API ---- */

static ecs_status api_populate(void *self, uint32_t n, int64_t first)
{
    rl_state *s = self;
    const ecs_host *h = s->host;
    ecs_entity *ents = n ? h->alloc(h, (size_t)n * sizeof *ents) : NULL;
    if (n && !ents) return ECS_ERR_NO_MEMORY;
    ecs_status st = n ? h->entity_create_many(h, ents, n) : ECS_OK;
    uint32_t top = 0;
    for (uint32_t i = 0; st == ECS_OK && i < n; i++)
        if (ecs_entity_index(ents[i]) >= top) top = ecs_entity_index(ents[i]) + 1;
    if (st == ECS_OK) st = reserve_slots(s, top);
    if (st == ECS_OK && s->count + n > s->cap) st = reserve_items(s, s->count + n);
    for (uint32_t i = 0; st == ECS_OK && i < n; i++) st = add(s, ents[i], first + i);
    if (st != ECS_OK && n) h->entity_destroy_many(h, ents, n); /* announced: removed then */
    h->free(h, ents);
    return st;
}

static int64_t api_sum(void *self)
{
    rl_state *s = self;
    int64_t sum = 0;
    for (uint32_t i = 0; i < s->count; i++) sum += VALUE(s, i);
    return sum;
}

static uint32_t api_count(void *self)
{
    return ((rl_state *)self)->count;
}

/* ---- the plugin ---- */

static ecs_status register_all(const ecs_host *h, rl_state *s)
{
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = RL_NAME,
                          .state = s,
                          .update = mgr_update,
                          .entities_destroyed = mgr_destroyed,
                          .count = mgr_count,
                          .reserve = mgr_reserve};
#if defined(RL_STREAM)
    m.write_component = mgr_write;
    m.read_component = mgr_read;
    (void)mgr_save, (void)mgr_load;
#elif !defined(RL_NO_JSON)
    m.save_component = mgr_save;
    m.load_component = mgr_load;
#endif
    ecs_status st = h->register_manager(h, &m);
#ifndef RL_NO_API
    struct {
        reloadee_api api;
        char pad[RL_API_PAD]; /* an API that grew */
    } api = {{sizeof api, s, api_populate, api_sum, api_count}, {0}};
    size_t size = RL_API_PAD > 1 ? sizeof api : sizeof api.api;
    api.api.struct_size = (uint32_t)size;
#ifdef RL_API_FIRST
    if (st == ECS_OK) st = h->api_publish(h, RL_API_FIRST, 1, &api, sizeof api.api);
#endif
    if (st == ECS_OK) st = h->api_publish(h, RL_API_NAME, RL_API_VERSION, &api, size);
#ifdef RL_IGNORES_REFUSAL
    if (st == ECS_OK) /* refused: the name is published twice; the status is dropped */
        h->log(h, ECS_LOG_INFO, WHO " load: publishing again: %s",
               ecs_status_text(h->api_publish(h, RL_API_NAME, RL_API_VERSION, &api, size)));
#endif
#else
    (void)api_populate, (void)api_sum, (void)api_count;
#endif
    return st;
}

static void state_free(rl_state *s)
{
    free_items(s);
    s->host->free(s->host, s->slot);
    s->host->free(s->host, s);
}

/* A fresh state; without JSON it makes its own few components (the scene cannot). */
static rl_state *state_new(const ecs_host *h)
{
    rl_state *s = h->alloc(h, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->layout = RL_LAYOUT;
    s->host = h;
#ifdef RL_NO_JSON
    for (int i = 1; i <= RL_OWN; i++) {
        ecs_entity e;
        if (h->entity_create(h, &e) != ECS_OK || add(s, e, 1000 * i) != ECS_OK) {
            state_free(s);
            return NULL;
        }
    }
#endif
    return s;
}

/* Two-phase adoption (ecs_on_commit): the state handed over counts this reload only once
 * the host accepted the build; a refused build leaves it as the running one has it. */
static void rl_commit(const ecs_host *h, void *arg, bool accepted)
{
    rl_state *s = arg;
    if (accepted)
        s->reloads++;
    else
        h->log(h, ECS_LOG_INFO, WHO " commit: refused, the state left as it was");
}

static ecs_status rl_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
#ifdef RL_CRASH_IN_LOAD
    abort();
#endif
    rl_state *prev = args && args->struct_size >= sizeof *args ? args->previous_state : NULL;
    if (prev && prev->layout != RL_LAYOUT) {
        h->log(h, ECS_LOG_ERROR, WHO " load: the state handed over has layout %u, not %d",
               prev->layout, RL_LAYOUT);
        return ECS_ERR_ABI;
    }
#if defined(RL_USES) && !defined(RL_USES_LATE)
    if (!find_used(h)) {
        h->log(h, ECS_LOG_INFO, WHO " load: no API " RL_USES);
        return ECS_ERR_NOT_FOUND;
    }
    h->log(h, ECS_LOG_INFO, WHO " load: found API " RL_USES " (provider has %u components)",
           used->count(used->self));
#endif
    rl_state *s = prev ? prev : state_new(h);
    if (!s) return ECS_ERR_NO_MEMORY;
    const ecs_host *old_host = s->host;
    s->host = h;
    ecs_status st = register_all(h, s);
#ifdef RL_ADOPT_FAILS
    if (st == ECS_OK && prev) {
        h->log(h, ECS_LOG_INFO, WHO " load: failing to adopt on purpose");
        st = ECS_ERR_PLUGIN;
    }
#endif
#ifdef RL_LOAD_FAILS
    if (st == ECS_OK) {
        h->log(h, ECS_LOG_INFO, WHO " load: failing on purpose");
        st = ECS_ERR_PLUGIN;
    }
#endif
    if (st != ECS_OK) {
        if (prev)
            s->host = old_host;
        else
            state_free(s);
        return st;
    }
    if (prev) { /* the reload count changes once the host accepted this build */
        h->log(h, ECS_LOG_INFO, WHO " load: adopted the previous state (reload %u), %u components",
               s->reloads + 1, s->count);
        st = ecs_on_commit(h, rl_commit, s);
    } else {
        h->log(h, ECS_LOG_INFO, WHO " load: new state");
    }
    *state = s;
    return st;
}

static void rl_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    rl_state *s = state;
    h->log(h, ECS_LOG_INFO, WHO " unload (%s): %llu updates run, %u components",
           unload_reason_text(reason), (unsigned long long)updates_run, s ? s->count : 0);
#ifdef RL_USES
    if (used && USED_THERE) /* a provider never goes before its dependents: still there */
        h->log(h, ECS_LOG_INFO, WHO " unload: its provider has %u components",
               used->count(used->self));
#endif
#ifdef RL_CRASH_IN_UNLOAD
    if (reason == ECS_UNLOAD_SHUTDOWN) raise(SIGSEGV);
#endif
    if (s && reason != ECS_UNLOAD_RELOAD_KEEP_STATE) state_free(s);
}

#ifdef RL_BAD_ABI
#define RL_ABI_MAJOR (ECS_ABI_MAJOR + 1)
#else
#define RL_ABI_MAJOR ECS_ABI_MAJOR
#endif

#if RL_LAYOUT == 1
#define RL_STATE_LAYOUT                                                                            \
    ECS_STATE_LAYOUT(rl_state, layout, count, cap, host, items, slot, slot_cap, reloads)
#else
#define RL_STATE_LAYOUT                                                                            \
    ECS_STATE_LAYOUT(rl_state, layout, reloads, host, slot, values, owners, slot_cap, count, cap)
#endif

#ifdef RL_ABI_1_0 /* built as for ABI 1.0: the description ends at unload, minor 0 */
#define RL_DESC_SIZE   offsetof(ecs_plugin_desc, state_size)
#define RL_ABI_MINOR   0
#define RL_DESC_LAYOUT ECS_STATE_NONE /* beyond struct_size: never read */
#else
#define RL_DESC_SIZE   sizeof(ecs_plugin_desc)
#define RL_ABI_MINOR   ECS_ABI_MINOR
#define RL_DESC_LAYOUT RL_STATE_LAYOUT
#endif

#ifdef RL_NEEDS
static const char *const rl_needs[] = {RL_NEEDS, NULL};
#define RL_DEPS rl_needs
#else
#define RL_DEPS NULL
#endif

static const ecs_plugin_desc rl_plugin = {
    RL_DESC_SIZE, RL_ABI_MAJOR, RL_ABI_MINOR, RL_NAME,   RL_VERSION,
    RL_LAYOUT,    RL_DEPS,      rl_load,      rl_unload, RL_DESC_LAYOUT,
};

ECS_PLUGIN_EXPORT(rl_plugin)
