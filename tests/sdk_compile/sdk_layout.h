/* SPDX-License-Identifier: MIT */
/* sdk_layout.h: the sizes and field offsets of the SDK's ABI structs (ecs_plugin.h, the
 * helpers' structs and the plugins' API structs), as a list that a C translation unit and
 * a C++ one both evaluate, so the C++ check can compare the two. */
#ifndef SDK_LAYOUT_H
#define SDK_LAYOUT_H

#include <stddef.h>

#include "debug_name_api.h"
#include "ecs_math.h"
#include "ecs_plugin.h"
#include "ecs_soa.h"
#include "mesh_api.h"
#include "transform_api.h"

/* X(label, value) for every size and offset a plugin and the host must agree on. */
#define SDK_LAYOUT(X)                                                                              \
    X("sizeof ecs_entity", sizeof(ecs_entity))                                                     \
    X("sizeof ecs_status", sizeof(ecs_status))                                                     \
    X("sizeof ecs_frame_info", sizeof(ecs_frame_info))                                             \
    X("offsetof ecs_frame_info.dt", offsetof(ecs_frame_info, dt))                                  \
    X("offsetof ecs_frame_info.time", offsetof(ecs_frame_info, time))                              \
    X("sizeof ecs_manager_desc", sizeof(ecs_manager_desc))                                         \
    X("offsetof ecs_manager_desc.name", offsetof(ecs_manager_desc, name))                          \
    X("offsetof ecs_manager_desc.update", offsetof(ecs_manager_desc, update))                      \
    X("offsetof ecs_manager_desc.load_component", offsetof(ecs_manager_desc, load_component))      \
    X("offsetof ecs_manager_desc.write_component", offsetof(ecs_manager_desc, write_component))    \
    X("sizeof ecs_json_writer", sizeof(ecs_json_writer))                                           \
    X("offsetof ecs_json_writer.entity", offsetof(ecs_json_writer, entity))                        \
    X("sizeof ecs_host", sizeof(ecs_host))                                                         \
    X("offsetof ecs_host.abi_major", offsetof(ecs_host, abi_major))                                \
    X("offsetof ecs_host.generations", offsetof(ecs_host, generations))                            \
    X("offsetof ecs_host.entity_create", offsetof(ecs_host, entity_create))                        \
    X("offsetof ecs_host.api_publish", offsetof(ecs_host, api_publish))                            \
    X("offsetof ecs_host.alloc", offsetof(ecs_host, alloc))                                        \
    X("offsetof ecs_host.plugin_name", offsetof(ecs_host, plugin_name))                            \
    X("offsetof ecs_host.config", offsetof(ecs_host, config))                                      \
    X("offsetof ecs_host.on_commit", offsetof(ecs_host, on_commit))                                \
    X("offsetof ecs_host.plugin_state", offsetof(ecs_host, plugin_state))                          \
    X("sizeof ecs_plugin_state_desc", sizeof(ecs_plugin_state_desc))                               \
    X("offsetof ecs_plugin_state_desc.read", offsetof(ecs_plugin_state_desc, read))                \
    X("sizeof ecs_load_args", sizeof(ecs_load_args))                                               \
    X("offsetof ecs_load_args.previous_state", offsetof(ecs_load_args, previous_state))            \
    X("sizeof ecs_plugin_desc", sizeof(ecs_plugin_desc))                                           \
    X("offsetof ecs_plugin_desc.abi_minor", offsetof(ecs_plugin_desc, abi_minor))                  \
    X("offsetof ecs_plugin_desc.name", offsetof(ecs_plugin_desc, name))                            \
    X("offsetof ecs_plugin_desc.state_version", offsetof(ecs_plugin_desc, state_version))          \
    X("offsetof ecs_plugin_desc.dependencies", offsetof(ecs_plugin_desc, dependencies))            \
    X("offsetof ecs_plugin_desc.unload", offsetof(ecs_plugin_desc, unload))                        \
    X("offsetof ecs_plugin_desc.state_size", offsetof(ecs_plugin_desc, state_size))                \
    X("offsetof ecs_plugin_desc.state_hash", offsetof(ecs_plugin_desc, state_hash))                \
    X("sizeof ecs_soa", sizeof(ecs_soa))                                                           \
    X("offsetof ecs_soa.field", offsetof(ecs_soa, field))                                          \
    X("sizeof ecs_entity_map", sizeof(ecs_entity_map))                                             \
    X("sizeof ecs_mat4", sizeof(ecs_mat4))                                                         \
    X("sizeof ecs_aabb", sizeof(ecs_aabb))                                                         \
    X("sizeof ecs_transform_local", sizeof(ecs_transform_local))                                   \
    X("offsetof ecs_transform_local.rotation", offsetof(ecs_transform_local, rotation))            \
    X("sizeof ecs_transform_api", sizeof(ecs_transform_api))                                       \
    X("offsetof ecs_transform_api.set_local", offsetof(ecs_transform_api, set_local))              \
    X("offsetof ecs_transform_api.instances", offsetof(ecs_transform_api, instances))              \
    X("sizeof ecs_mesh_desc", sizeof(ecs_mesh_desc))                                               \
    X("offsetof ecs_mesh_desc.local_bounds", offsetof(ecs_mesh_desc, local_bounds))                \
    X("sizeof ecs_mesh_info", sizeof(ecs_mesh_info))                                               \
    X("offsetof ecs_mesh_info.world_bounds", offsetof(ecs_mesh_info, world_bounds))                \
    X("sizeof ecs_mesh_api", sizeof(ecs_mesh_api))                                                 \
    X("offsetof ecs_mesh_api.count", offsetof(ecs_mesh_api, count))                                \
    X("sizeof ecs_debug_name_api", sizeof(ecs_debug_name_api))                                     \
    X("offsetof ecs_debug_name_api.count", offsetof(ecs_debug_name_api, count))

#ifdef __cplusplus
extern "C" {
#endif

/* The list above as the C compiler sees it: writes up to max values into out and returns
 * how many the list has. */
size_t sdk_layout_c(size_t *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif
