/* json.h: reading JSON files with errors a person can act on: "file:line:col: what". */
#ifndef HOST_JSON_H
#define HOST_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Read and parse path. On failure returns NULL and writes into err (errlen bytes) a
 * message naming the file and, for syntax errors, the line and column: a missing file,
 * a directory, an empty file, a read error, a syntax error. */
struct cJSON *host_json_read_file(const char *path, char *err, size_t errlen);

/* The whole file as a NUL-terminated buffer (free() it), its length in *len; NULL with a
 * message in err for a missing file, a directory or a read error. */
char *host_json_read_text(const char *path, size_t *len, char *err, size_t errlen);

/* Parse text[0..len) read from path; NULL with a file:line:col message in err. */
struct cJSON *host_json_parse(const char *path, const char *text, size_t len, char *err,
                              size_t errlen);

/* Where node (a value inside root, parsed from text) starts: its line and column, and its
 * JSON path ("entities[3].transform.position") into path. False when node is not in
 * root. Costs one scan of the text: meant for error messages. */
bool host_json_locate(const char *text, size_t len, const struct cJSON *root,
                      const struct cJSON *node, int *line, int *col, char *path, size_t pathlen);

/* Write "file:line:col: path: message" into out: the place of node `at` (a value inside
 * root, parsed from text) and its JSON path. Without `lines` (a .glb, whose JSON chunk's
 * lines are not the file's), "file: path: message"; when `at` is NULL or cannot be found,
 * "file: message". Long messages are cut to outlen. */
void host_json_error_at(char *out, size_t outlen, const char *file, const char *text, size_t len,
                        const struct cJSON *root, const struct cJSON *at, bool lines,
                        const char *message);

/* Line and column (from 1) of position `at` inside text. */
void host_json_position(const char *text, const char *at, int *line, int *col);

/* A short name for the type of a cJSON value ("a string", "an object", ...). */
const char *host_json_type_name(const struct cJSON *v);

#endif
