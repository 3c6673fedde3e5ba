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

/* Unload everything, free the world, remove the folder. */
void fixture_close(fixture *f);

#endif
