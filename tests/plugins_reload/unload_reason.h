/* SPDX-License-Identifier: MIT */
/* unload_reason.h: the words the reload test plugins (reloadee.c, physics.c) log for the
 * reason their unload() was called, which test_reload.c reads back. */
#ifndef UNLOAD_REASON_H
#define UNLOAD_REASON_H

#include "ecs_plugin.h"

static inline const char *unload_reason_text(ecs_unload_reason reason)
{
    return reason == ECS_UNLOAD_RELOAD_KEEP_STATE ? "keep state"
           : reason == ECS_UNLOAD_RELOAD_MIGRATED ? "migrated"
                                                  : "shutdown";
}

#endif
