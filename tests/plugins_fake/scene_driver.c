/* SPDX-License-Identifier: MIT */
/* scene_driver.c: test plugin "scene_driver" for test_mesh.c's run of the real ecs-host
 * on the transform, debug_name and mesh plugins. It works only through their APIs.
 *
 * Every frame f it first checks the entities it made in frame f - 1 (their names, mesh
 * counts, and that mesh's update gave each mesh the world bounds of ecs_aabb_transform of
 * its entity's world matrix), then destroys the first root of frame f - 1 (its child goes
 * with it: transform destroys children), then makes ROOTS roots, each with a transform at
 * (f, k, 0), a name and 2 meshes, and one child of the first root with a name and 1 mesh.
 * After N >= 1 frames: 4N - 2(N - 1) entities live, each named and with a transform, and
 * 2(3N - (N - 1)) + 1 meshes. A failed check is an error line on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "debug_name_api.h"
#include "ecs_plugin.h"
#include "mesh_api.h"
#include "transform_api.h"

#define ROOTS 3
#define MADE  (ROOTS + 1) /* entities made per frame: the roots, then the child */

typedef struct driver {
    const ecs_host *h;
    const ecs_transform_api *tf;
    const ecs_mesh_api *mesh;
    const ecs_debug_name_api *dn;
    ecs_entity last[MADE]; /* made in the previous frame */
    bool have_last;
    uint32_t live; /* entities made and not destroyed */
} driver;

static bool same_box(ecs_aabb a, ecs_aabb b)
{
    return a.min.x == b.min.x && a.min.y == b.min.y && a.min.z == b.min.z && a.max.x == b.max.x &&
           a.max.y == b.max.y && a.max.z == b.max.z;
}

/* Check entity e (k-th made in its frame): its name, meshes and their world bounds. */
static void check(driver *d, ecs_entity e, int k, uint64_t frame)
{
    char want[32];
    snprintf(want, sizeof want, "f%llu.%d", (unsigned long long)frame, k);
    const char *name = d->dn->get(d->dn->self, e);
    if (!name || strcmp(name, want) != 0)
        d->h->log(d->h, ECS_LOG_ERROR, "entity %s is named %s", want, name ? name : "(none)");
    uint32_t n = d->mesh->count_of(d->mesh->self, e), want_n = k < ROOTS ? 2u : 1u;
    if (n != want_n) d->h->log(d->h, ECS_LOG_ERROR, "entity %s has %u meshes", want, n);
    ecs_mat4 m;
    if (d->tf->get_world(d->tf->self, e, &m) != ECS_OK)
        d->h->log(d->h, ECS_LOG_ERROR, "entity %s has no world matrix", want);
    for (uint32_t j = 0; j < n; j++) {
        ecs_mesh_info info;
        if (d->mesh->get(d->mesh->self, e, j, &info) != ECS_OK ||
            !same_box(info.world_bounds, ecs_aabb_transform(&m, info.local_bounds)))
            d->h->log(d->h, ECS_LOG_ERROR, "entity %s: mesh %u has stale world bounds", want, j);
    }
}

/* Make one entity: transform (under parent), name "f<frame>.<k>", `meshes` meshes. */
static ecs_entity make(driver *d, uint64_t frame, int k, ecs_entity parent, int meshes)
{
    ecs_entity e;
    if (d->h->entity_create(d->h, &e) != ECS_OK) return ecs_entity_null();
    d->live++;
    ecs_transform_local local = {
        {(float)frame, (float)k, 0}, {0, 0, 0.38268343f, 0.9238795f}, {1, 2, 1}};
    if (!ecs_entity_is_null(parent)) local.position = ecs_vec3_make(0, 0, 1);
    char name[32];
    snprintf(name, sizeof name, "f%llu.%d", (unsigned long long)frame, k);
    ecs_status s = d->tf->add(d->tf->self, e, &local, parent);
    if (s == ECS_OK) s = d->dn->set(d->dn->self, e, name);
    for (int j = 0; s == ECS_OK && j < meshes; j++) {
        ecs_mesh_desc desc = {
            "crate.mesh", j ? "metal" : "wood", true, {{-1, -1, -1}, {1, 1 + (float)j, 1}}};
        s = d->mesh->add(d->mesh->self, e, &desc, NULL);
    }
    if (s != ECS_OK) d->h->log(d->h, ECS_LOG_ERROR, "making %s: %s", name, ecs_status_text(s));
    return e;
}

static void driver_update(void *state, const ecs_frame_info *frame)
{
    driver *d = (driver *)state;
    if (d->have_last) {
        for (int k = 0; k < MADE; k++) check(d, d->last[k], k, frame->frame - 1);
        if (d->h->entity_destroy(d->h, d->last[0]) == ECS_OK) d->live -= 2; /* and its child */
    }
    for (int k = 0; k < ROOTS; k++) d->last[k] = make(d, frame->frame, k, ecs_entity_null(), 2);
    d->last[ROOTS] = make(d, frame->frame, ROOTS, d->last[0], 1);
    d->have_last = true;
}

static uint32_t driver_count(void *state)
{
    return ((const driver *)state)->live;
}

static ecs_status driver_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    driver *d = (driver *)h->alloc(h, sizeof *d);
    if (!d) return ECS_ERR_NO_MEMORY;
    memset(d, 0, sizeof *d);
    d->h = h;
    d->tf = h->api_find(h, ECS_TRANSFORM_API_NAME, 1, NULL);
    d->mesh = h->api_find(h, ECS_MESH_API_NAME, 1, NULL);
    d->dn = h->api_find(h, ECS_DEBUG_NAME_API_NAME, 1, NULL);
    ecs_manager_desc m = {.struct_size = sizeof m,
                          .name = "scene_driver",
                          .state = d,
                          .update = driver_update,
                          .count = driver_count};
    ecs_status s = d->tf && d->mesh && d->dn ? h->register_manager(h, &m) : ECS_ERR_NOT_FOUND;
    if (s != ECS_OK) {
        h->free(h, d);
        return s;
    }
    *state = d;
    return ECS_OK;
}

static void driver_unload(const ecs_host *h, void *state, ecs_unload_reason why)
{
    h->free(h, state);
}

static const char *const deps[] = {"transform", "mesh", "debug_name", NULL};

static const ecs_plugin_desc driver_plugin = {
    ECS_PLUGIN_DESC_HEADER, "scene_driver", "1.0.0", 1, deps, driver_load,
    driver_unload,          ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(driver_plugin)
