/* sdk_layout.h: the sizes and field offsets of the SDK's ABI structs, as a list that a C
 * translation unit and a C++ one both evaluate, so the C++ check can compare the two. */
#ifndef SDK_LAYOUT_H
#define SDK_LAYOUT_H

#include <stddef.h>

#include "ecs_plugin.h"

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
    X("sizeof ecs_host", sizeof(ecs_host))                                                         \
    X("offsetof ecs_host.abi_major", offsetof(ecs_host, abi_major))                                \
    X("offsetof ecs_host.generations", offsetof(ecs_host, generations))                            \
    X("offsetof ecs_host.entity_create", offsetof(ecs_host, entity_create))                        \
    X("offsetof ecs_host.api_publish", offsetof(ecs_host, api_publish))                            \
    X("offsetof ecs_host.alloc", offsetof(ecs_host, alloc))                                        \
    X("offsetof ecs_host.plugin_name", offsetof(ecs_host, plugin_name))                            \
    X("offsetof ecs_host.config", offsetof(ecs_host, config))                                      \
    X("sizeof ecs_load_args", sizeof(ecs_load_args))                                               \
    X("offsetof ecs_load_args.previous_state", offsetof(ecs_load_args, previous_state))            \
    X("sizeof ecs_plugin_desc", sizeof(ecs_plugin_desc))                                           \
    X("offsetof ecs_plugin_desc.abi_minor", offsetof(ecs_plugin_desc, abi_minor))                  \
    X("offsetof ecs_plugin_desc.name", offsetof(ecs_plugin_desc, name))                            \
    X("offsetof ecs_plugin_desc.state_version", offsetof(ecs_plugin_desc, state_version))          \
    X("offsetof ecs_plugin_desc.dependencies", offsetof(ecs_plugin_desc, dependencies))            \
    X("offsetof ecs_plugin_desc.unload", offsetof(ecs_plugin_desc, unload))

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
