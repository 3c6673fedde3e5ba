/* gltf.h: glTF 2.0 import (.gltf JSON, .glb binary container) as an ecs-host scene.
 *
 * The result is the same cJSON tree a scene file parses to ({"version": 1, "entities":
 * [...]}), so it goes through the one scene loader: each node becomes an entity (id
 * "node<i>"), its name a debug_name, its TRS (or decomposed matrix) and place in the tree
 * a transform, each primitive of its mesh one mesh component.
 */
#ifndef HOST_GLTF_H
#define HOST_GLTF_H

#include <stddef.h>

struct cJSON;

/* Import path. NULL on failure, with a message naming the file and what is wrong in err
 * (never a crash on a bad file). */
struct cJSON *host_gltf_import(const char *path, char *err, size_t errlen);

#endif
