/* fixture.h: load real plugin .so files into an in-process host_world for API tests.
 * A temporary folder (mode 0700) gets symlinks to the chosen plugins, then the real
 * loader loads it, so tests exercise the same path as the ecs-host binary. */
#ifndef TESTS_FIXTURE_H
#define TESTS_FIXTURE_H

#include "world.h"

typedef struct fixture {
    host_world *w;
    char dir[256];
    int links;
} fixture;

/* Load the plugins whose paths are given (NULL-terminated). Returns 0, or -1 with a
 * message on stderr (folder, link or load failure). */
int fixture_open(fixture *f, const char *const *plugin_paths);

/* The published API name (version >= 1), or NULL. */
const void *fixture_api(fixture *f, const char *name);

/* Run n frames. */
void fixture_frames(fixture *f, int n);

/* e's component of manager m as a cJSON value in *out (NULL when e has none), saved as
 * the host saves it: write_component through the host's JSON writer (the text parsed
 * back), else save_component. References (the writer's entity()) are written as
 * "ref<index>". With out NULL, the manager is called with a NULL writer / out (its own
 * argument check). */
struct cJSON;
ecs_status fixture_save_json(const ecs_manager_desc *m, ecs_entity e, struct cJSON **out);

/* Unload everything, free the world, remove the folder. */
void fixture_close(fixture *f);

#endif
