/* SPDX-License-Identifier: MIT */
/* gltf.h: glTF 2.0 import (.gltf JSON, .glb binary container) as an ecs-host scene.
 *
 * The result is the same cJSON tree a scene file parses to ({"version": 1, "entities":
 * [...]}), so it goes through the one scene loader. What becomes of a file:
 *
 *   which nodes  the default scene's ("scene"), else scenes[0]'s, else (no scenes) every
 *                root node; with all their descendants. Other nodes are left out.
 *   entity       one per node, id "node<i>" (i: the node's index in the file), listed
 *                parents before children.
 *   debug_name   the node's name. Every control character and every byte that is not
 *                valid UTF-8 becomes '_', the result is cut to 255 bytes at a character
 *                boundary (both with a warning); an empty name gives no debug_name.
 *   transform    translation / rotation / scale (defaults: identity), or the column-major
 *                "matrix" split into TRS (translation: column 3; scale: the lengths of
 *                columns 0..2, x negated when the matrix mirrors; rotation: the columns
 *                made orthonormal, then a quaternion). Its last row is taken to be 0 0 0 1
 *                and a shear is dropped: glTF requires matrices to be TRS. "parent":
 *                "node<p>" for a child.
 *   mesh         one entry per primitive of the node's mesh: resource
 *                "<file basename>#mesh<i>/prim<j>" (i the mesh's index, j the primitive's:
 *                unique in the file and stable, where mesh names may be missing or
 *                repeated; the basename is cleaned like a name and cut to fit 255 bytes),
 *                material: materials[k].name when it has one (cleaned like a name),
 *                visible: true, bounds: the POSITION accessor's min/max (dequantized for a
 *                normalized integer accessor, KHR_mesh_quantization); without them the
 *                box of its vertices, read from the .glb's BIN chunk, a data: URI or a
 *                file in the glTF's folder (only when importing a file); without
 *                POSITION: an empty box at 0 and a warning.
 *
 * A file is .glb when it starts with the magic "glTF" or its name ends in ".glb"; its
 * header (version 2, length == the file's size) and every chunk's length are checked, the
 * first chunk must be JSON (padded with spaces, not NULs). The JSON must say "asset":
 * {"version": "2.x"}. Errors in what the import reads are refused, never guessed around:
 * a wrong JSON type, an index out of range (node, mesh, accessor, material, scene,
 * bufferView, buffer), a node that is its own ancestor or appears under two parents (or
 * is a scene root and a child), both "matrix" and TRS on one node, a number that is not a
 * finite float, a zero rotation, min above max, vertex data outside its view or buffer, a
 * buffer uri outside the file's folder, a required extension it does not implement.
 * Fixed up with a warning: a non-unit rotation, a matrix that is not TRS.
 */
#ifndef HOST_GLTF_H
#define HOST_GLTF_H

#include <stddef.h>

struct cJSON;

/* Import the file at path: the scene tree (the caller cJSON_Delete()s it), or NULL with
 * a message naming the file and what is wrong in err (errlen bytes; for a .gltf with the
 * line, column and JSON path of the bad value). Never crashes on a bad file. */
struct cJSON *host_gltf_import(const char *path, char *err, size_t errlen);

/* The same for a file already in memory: data[0..size) is its content (need not be
 * NUL-terminated; NULL when size is 0), name is used in messages and mesh resource names
 * and to expect a .glb. Nothing of data is kept. */
struct cJSON *host_gltf_import_memory(const char *name, const unsigned char *data, size_t size,
                                      char *err, size_t errlen);

#endif
