/* SPDX-License-Identifier: MIT */
/* json.h: reading JSON files with errors a person can act on: "file:line:col: what".
 * The parser is the host's own (jparse.h): strict JSON into ordinary cJSON trees. */
#ifndef HOST_JSON_H
#define HOST_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "jparse.h" /* host_json_arena */

struct cJSON;

/* Read and parse path. On failure returns NULL and writes into err (errlen bytes) a
 * message naming the file and, for syntax errors, the line and column: a missing file,
 * a directory, an empty file, a read error, a syntax error. */
struct cJSON *host_json_read_file(const char *path, char *err, size_t errlen);

/* The whole file as a NUL-terminated buffer (free() it), its length in *len; NULL with a
 * message in err for a missing file, a directory or a read error. */
char *host_json_read_text(const char *path, size_t *len, char *err, size_t errlen);

/* Parse text[0..len) read from path (no NUL needed) into a tree to cJSON_Delete; NULL
 * with a message in err: "path:line:col: what" at the offending byte, for instance
 * "expected ',' or '}' after an object member, found '\"'", or "path: the file is empty,
 * expected a JSON value". */
struct cJSON *host_json_parse(const char *path, const char *text, size_t len, char *err,
                              size_t errlen);

/* The same, the tree's nodes and strings in a new arena returned in *arena: free the
 * whole tree with host_json_arena_free(*arena), never with cJSON_Delete. On failure NULL,
 * *arena NULL (nothing to free) and the message in err. */
struct cJSON *host_json_parse_arena(const char *path, const char *text, size_t len,
                                    host_json_arena **arena, char *err, size_t errlen);

/* Where node (a value inside root, parsed from text) starts: its line and column, and its
 * JSON path ("entities[3].transform.position") into path. False when node is not in
 * root. Costs one scan of the text: meant for error messages. */
/* The JSON path of node in the tree root ("entities[3].transform.position[1]") without
 * the text it came from; false (path "") when node is not in it. */
bool host_json_path_of(const struct cJSON *root, const struct cJSON *node, char *path, size_t size);

bool host_json_locate(const char *text, size_t len, const struct cJSON *root,
                      const struct cJSON *node, int *line, int *col, char *path, size_t pathlen);

/* Where node (a value inside root, parsed from text[0..len)) starts in the text, or NULL. */
const char *host_json_find(const char *text, size_t len, const struct cJSON *root,
                           const struct cJSON *node);

/* The JSON path ("entities[3].transform.scale") of the value or key starting at `offset`
 * of the valid JSON text[0..len), into path. Costs a scan up to the offset: meant for
 * error messages. */
bool host_json_path_at(const char *text, size_t len, size_t offset, char *path, size_t size);

/* Write "file:line:col: path: message" into out: the place of node `at` (a value inside
 * root, parsed from text) and its JSON path. Without `lines` (a .glb, whose JSON chunk's
 * lines are not the file's), "file: path: message"; when `at` is NULL or cannot be found,
 * "file: message". Long messages are cut to outlen. */
void host_json_error_at(char *out, size_t outlen, const char *file, const char *text, size_t len,
                        const struct cJSON *root, const struct cJSON *at, bool lines,
                        const char *message);

/* A short name for the type of a cJSON value ("a string", "an object", ...). */
const char *host_json_type_name(const struct cJSON *v);

#endif
