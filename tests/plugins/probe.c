/* SPDX-License-Identifier: MIT */
/* probe.c: a configurable test plugin, built many times with -D flags: its name, one
 * dependency, its managers, an API, a failing load(). It logs what a test checks. */
#include <cjson/cJSON.h>
#include <string.h>

#include "ecs_plugin.h"

/* Build flags (strings are C string literals):
 *   PROBE_NAME="x"          the plugin's name (required)
 *   PROBE_DEP="y"           one dependency
 *   PROBE_MANAGER="m"       register this one manager; default: "x.first" and "x.second"
 *   PROBE_API="a.b"         publish this API (v1)
 *   PROBE_IGNORE_ERRORS     return ECS_OK from load() even when a registration is refused
 *   PROBE_FAIL              register, publish, leak 32 bytes, then fail with ECS_ERR_PLUGIN
 *   PROBE_SYSTEM            also register a system "NAME.sys" over its first manager (and so
 *                           a collection), when the host offers systems
 *   PROBE_FIND="a.b"        in its first update, log "found a.b" or "no a.b" (api_find)
 *   PROBE_CREATE=n          create n entities in load(), before anything else
 *   PROBE_ODD_TEXT          a version and a dependency holding a newline and a terminal
 *                           escape, as a careless or hostile plugin may give
 *
 * Log lines, at info level: "load NAME (plugin_name P)", "config of NAME: JSON|none" in
 * load(); "first update of MANAGER" in each manager's update of frame 0; "unload NAME". */
#ifndef PROBE_NAME
#error "define PROBE_NAME"
#endif
#ifdef PROBE_ODD_TEXT
#define PROBE_VERSION "1.0\n[error] forged by the version\x1b[31m"
#define PROBE_DEP     "ghost\n[error] forged by a dependency"
#else
#define PROBE_VERSION "0.1.0"
#endif

typedef struct probe_api {
    uint32_t struct_size;
    uint32_t magic;
} probe_api;

typedef struct probe_manager {
    const ecs_host *host;
    char name[64];
} probe_manager;

static probe_manager managers[2]; /* a plugin is loaded at most once per process */

static void probe_update(void *state, const ecs_frame_info *frame)
{
    probe_manager *m = state;
    if (frame->frame != 0) return;
    m->host->log(m->host, ECS_LOG_INFO, "first update of %s", m->name);
#ifdef PROBE_FIND
    if (m == &managers[0])
        m->host->log(m->host, ECS_LOG_INFO, "%s %s",
                     m->host->api_find(m->host, PROBE_FIND, 1, NULL) ? "found" : "no", PROBE_FIND);
#endif
}

#ifdef PROBE_SYSTEM
static void probe_system(void *state, const ecs_entity *entities, uint32_t count,
                         const ecs_frame_info *frame)
{
    probe_manager *m = state;
    if (frame->frame == 0) m->host->log(m->host, ECS_LOG_INFO, "first run of %s.sys", PROBE_NAME);
}
#endif

static ecs_status probe_register(const ecs_host *h, probe_manager *m, const char *name)
{
    m->host = h;
    strncpy(m->name, name, sizeof m->name - 1);
    ecs_manager_desc d = {
        .struct_size = sizeof d, .name = m->name, .state = m, .update = probe_update};
    return h->register_manager(h, &d);
}

static void probe_log_config(const ecs_host *h)
{
    char *text = h->config ? cJSON_PrintUnformatted(h->config) : NULL;
    h->log(h, ECS_LOG_INFO, "config of %s: %s", PROBE_NAME, text ? text : "none");
    cJSON_free(text);
}

static ecs_status probe_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    ecs_status s = ECS_OK;
    h->log(h, ECS_LOG_INFO, "load %s (plugin_name %s)", PROBE_NAME,
           h->plugin_name ? h->plugin_name : "NULL");
    probe_log_config(h);
#ifdef PROBE_CREATE
    ecs_entity made[PROBE_CREATE];
    if (h->entity_create_many(h, made, PROBE_CREATE) == ECS_OK)
        h->log(h, ECS_LOG_INFO, "%s created %d entities", PROBE_NAME, PROBE_CREATE);
#endif
#ifdef PROBE_MANAGER
    s = probe_register(h, &managers[0], PROBE_MANAGER);
#else
    s = probe_register(h, &managers[0], PROBE_NAME ".first");
    if (s == ECS_OK) s = probe_register(h, &managers[1], PROBE_NAME ".second");
#endif
#ifdef PROBE_SYSTEM
    static const char *const with[] = {PROBE_NAME ".first", NULL};
    ecs_system_desc sys = {.struct_size = sizeof sys,
                           .name = PROBE_NAME ".sys",
                           .query = {sizeof(ecs_query_desc), with, NULL},
                           .state = &managers[0],
                           .run = probe_system};
    if (s == ECS_OK && ecs_host_has_queries(h)) s = h->register_system(h, &sys);
#endif
#ifdef PROBE_API
    probe_api api = {sizeof api, 0x5eed};
    if (s == ECS_OK) s = h->api_publish(h, PROBE_API, 1, &api, sizeof api);
#endif
#ifdef PROBE_FAIL
    if (s == ECS_OK) {
        h->alloc(h, 32); /* a bad plugin: the host must free and report it */
        s = ECS_ERR_PLUGIN;
    }
#endif
#ifdef PROBE_IGNORE_ERRORS
    s = ECS_OK;
#endif
    *state = NULL;
    return s;
}

static void probe_unload(const ecs_host *h, void *state, ecs_unload_reason reason)
{
    h->log(h, ECS_LOG_INFO, "unload %s", PROBE_NAME);
}

#ifdef PROBE_DEP
static const char *const probe_deps[] = {PROBE_DEP, NULL};
#else
static const char *const probe_deps[] = {NULL};
#endif

static const ecs_plugin_desc probe_plugin = {
    ECS_PLUGIN_DESC_HEADER, PROBE_NAME,     PROBE_VERSION, 1, probe_deps, probe_load,
    probe_unload,           ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(probe_plugin)
