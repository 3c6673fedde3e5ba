/* SPDX-License-Identifier: MIT */
/* badabi.c: bad test plugins with a description the host must refuse before calling
 * load(): built as badabi_major (-DVARIANT_MAJOR), badabi_minor, badabi_size. */
#include "ecs_plugin.h"

#if defined(VARIANT_MAJOR) /* an ABI major the host does not speak */
#define BADABI_NAME   "badabi_major"
#define BADABI_HEADER sizeof(ecs_plugin_desc), ECS_ABI_MAJOR + 1, ECS_ABI_MINOR
#elif defined(VARIANT_MINOR) /* built against a newer SDK than the host's */
#define BADABI_NAME   "badabi_minor"
#define BADABI_HEADER sizeof(ecs_plugin_desc), ECS_ABI_MAJOR, ECS_ABI_MINOR + 1
#elif defined(VARIANT_SIZE) /* a description shorter than ABI 1.0's: no unload field */
#define BADABI_NAME   "badabi_size"
#define BADABI_HEADER offsetof(ecs_plugin_desc, unload), ECS_ABI_MAJOR, ECS_ABI_MINOR
#else
#error "define VARIANT_MAJOR, VARIANT_MINOR or VARIANT_SIZE"
#endif

static ecs_status badabi_load(const ecs_host *h, const ecs_load_args *args, void **state)
{
    h->log(h, ECS_LOG_ERROR, "%s: load() was called", BADABI_NAME);
    return ECS_OK;
}

static const ecs_plugin_desc badabi_plugin = {
    BADABI_HEADER, BADABI_NAME, "1.0.0", 1, NULL, badabi_load, NULL, ECS_STATE_NONE,
};

ECS_PLUGIN_EXPORT(badabi_plugin)
