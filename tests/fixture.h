/* SPDX-License-Identifier: MIT */
/* fixture.h: load real plugin .so files into an in-process host_session for API tests.
 * A temporary folder (mode 0700) gets symlinks to the chosen plugins, then the real
 * loader loads it, so tests exercise the same path as the ecs-host binary. */
#ifndef TESTS_FIXTURE_H
#define TESTS_FIXTURE_H

#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

typedef struct fixture {
    host_session *s; /* the session the plugins are loaded into */
    host_world *w;   /* its world */
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

/* Give e the component of manager m that the JSON text describes, as the host loads it:
 * read_component through the host's JSON reader (strict: the text is checked as it is
 * read), else load_component on the text parsed. A reference (the reader's entity())
 * resolves no id: it fails with "reference to an unknown id '<id>'", the host's message
 * for an id it does not know. The reader's first error is printed on stderr as the host
 * logs a scene error; a failed reader makes the status ECS_ERR_BAD_VALUE if the manager
 * said ECS_OK, and a manager that returns ECS_OK before reading its whole value gets
 * ECS_ERR_PLUGIN. With text NULL, the manager is called with a NULL reader / json (its own
 * argument check). */
ecs_status fixture_load_json(const ecs_manager_desc *m, ecs_entity e, const char *text);

/* Unload everything, free the world, remove the folder. */
void fixture_close(fixture *f);

#endif
