/* SPDX-License-Identifier: MIT */
/* tfprobe.c: test plugin "tfprobe" (depends on transform and mesh): checks every frame,
 * through the API pointers it got at load, that the real transform and mesh plugins agree
 * on a small hierarchy it made, so a test can reload transform.so under them.
 *
 * At load: parent P (position (x, 0, 0), scale 2) and child C under it (position
 * (1, 0, 0)) with one mesh, local bounds [-1, 1]^3. Then C's world matrix is a
 * translation by x + 2 with scale 2, and the mesh's world bounds are
 * [x, x + 4] x [-2, 2] x [-2, 2]: exact in floats. Each update (after transform's and
 * mesh's, which it depends on) checks both for the x it set last, then moves P to a new
 * x. It notices when transform's code changed (the host rewrote the API's function
 * pointers in place) and counts the checks made after that.
 *
 * Log lines (info): "tfprobe: transform code changed at frame F"; at unload
 * "tfprobe: N frames checked, A after the transform code changed, M mismatches"; each
 * mismatch is an error line saying what was read.
 */
#include <string.h>

#include "ecs_math.h"
#include "ecs_plugin.h"
#include "mesh_api.h"
#include "transform_api.h"

typedef struct probe {
    const ecs_host *host;
    const ecs_transform_api *tf; /* the host's copies: rewritten in place by a reload */
    const ecs_mesh_api *mesh;
    ecs_entity parent, child;
    float x; /* P's position as last set */
    ecs_status (*seen_get_world)(void *, ecs_entity, ecs_mat4 *);
    bool changed;
    uint64_t checked, after, mismatches;
} probe;

static probe the_probe; /* loaded once per process */

static ecs_transform_local local_at(float x, float scale)
{
    ecs_transform_local l = {ecs_vec3_make(x, 0, 0), ecs_quat_identity(),
                             ecs_vec3_make(scale, scale, scale)};
    return l;
}

static bool same_box(ecs_aabb a, ecs_aabb b)
{
    return a.min.x == b.min.x && a.min.y == b.min.y && a.min.z == b.min.z && a.max.x == b.max.x &&
           a.max.y == b.max.y && a.max.z == b.max.z;
}

/* Do C's world matrix and its mesh's world bounds match P at p->x? */
static void check(probe *p, uint64_t frame)
{
    ecs_mat4 m;
    ecs_mesh_info info;
    ecs_status s1 = p->tf->get_world(p->tf->self, p->child, &m);
    ecs_status s2 = p->mesh->get(p->mesh->self, p->child, 0, &info);
    ecs_aabb want = {ecs_vec3_make(p->x, -2, -2), ecs_vec3_make(p->x + 4, 2, 2)};
    bool ok = s1 == ECS_OK && s2 == ECS_OK && m.m[12] == p->x + 2 && m.m[13] == 0 && m.m[14] == 0 &&
              m.m[0] == 2 && m.m[5] == 2 && m.m[10] == 2 && same_box(info.world_bounds, want);
    p->checked++;
    p->after += p->changed;
    if (ok) return;
    p->mismatches++;
    p->host->log(p->host, ECS_LOG_ERROR,
                 "tfprobe: frame %llu: x %g: get_world %s, translation (%g, %g, %g); mesh %s, "
                 "world bounds x [%g, %g]",
                 (unsigned long long)frame, (double)p->x, ecs_status_text(s1), (double)m.m[12],
                 (double)m.m[13], (double)m.m[14], ecs_status_text(s2),
                 (double)info.world_bounds.min.x, (double)info.world_bounds.max.x);
}

static void probe_update(void *state, const ecs_frame_info *frame)
{
    probe *p = state;
    if (p->tf->get_world != p->seen_get_world) {
        p->host->log(p->host, ECS_LOG_INFO, "tfprobe: transform code changed at frame %llu",
                     (unsigned long long)frame->frame);
        p->seen_get_world = p->tf->get_world;
        p->changed = true;
    }
    check(p, frame->frame);
    p->x = (float)(frame->frame % 7) + 1;
    ecs_transform_local l = local_at(p->x, 2);
    if (p->tf->set_local(p->tf->self, p->parent, &l) != ECS_OK)
        p->host->log(p->host, ECS_LOG_ERROR, "tfprobe: set_local failed");
}

/* Make P and C with their transforms and C's mesh. */
static ecs_status build(probe *p)
{
    const ecs_host *h = p->host;
    ecs_transform_local lp = local_at(0, 2), lc = local_at(1, 1);
    ecs_mesh_desc d = {
        "tfprobe_box", NULL, true, {ecs_vec3_make(-1, -1, -1), ecs_vec3_make(1, 1, 1)}};
    ecs_status s = h->entity_create(h, &p->parent);
    if (s == ECS_OK) s = h->entity_create(h, &p->child);
    if (s == ECS_OK) s = p->tf->add(p->tf->self, p->parent, &lp, ecs_entity_null());
    if (s == ECS_OK) s = p->tf->add(p->tf->self, p->child, &lc, p->parent);
    if (s == ECS_OK) s = p->mesh->add(p->mesh->self, p->child, &d, NULL);
    return s;
}

static ecs_status probe_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    probe *p = &the_probe;
    memset(p, 0, sizeof *p);
    p->host = h;
    p->tf = h->api_find(h, ECS_TRANSFORM_API_NAME, ECS_TRANSFORM_API_VERSION, NULL);
    p->mesh = h->api_find(h, ECS_MESH_API_NAME, ECS_MESH_API_VERSION, NULL);
    if (!p->tf || !p->mesh) return ECS_ERR_NOT_FOUND;
    p->seen_get_world = p->tf->get_world;
    ecs_status s = build(p);
    ecs_manager_desc m = {
        .struct_size = sizeof m, .name = "tfprobe", .state = p, .update = probe_update};
    if (s == ECS_OK) s = h->register_manager(h, &m);
    *state = p;
    return s;
}

static void probe_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    probe *p = state;
    h->log(h, ECS_LOG_INFO,
           "tfprobe: %llu frames checked, %llu after the transform code changed, %llu "
           "mismatches",
           (unsigned long long)p->checked, (unsigned long long)p->after,
           (unsigned long long)p->mismatches);
}

static const char *const probe_deps[] = {"transform", "mesh", NULL};

static const ecs_plugin_desc probe_plugin = {
    ECS_PLUGIN_DESC_HEADER, "tfprobe",      "1.0.0", 1, probe_deps, probe_load,
    probe_unload,           ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(probe_plugin)
