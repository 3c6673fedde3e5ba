/* json.h: reading JSON files with errors a person can act on: "file:line:col: what". */
#ifndef HOST_JSON_H
#define HOST_JSON_H

#include <stddef.h>

struct cJSON;

/* Read and parse path. On failure returns NULL and writes into err (errlen bytes) a
 * message naming the file and, for syntax errors, the line and column: a missing file,
 * a directory, an empty file, a read error, a syntax error. */
struct cJSON *host_json_read_file(const char *path, char *err, size_t errlen);

/* Line and column (from 1) of position `at` inside text. */
void host_json_position(const char *text, const char *at, int *line, int *col);

/* A short name for the type of a cJSON value ("a string", "an object", ...). */
const char *host_json_type_name(const struct cJSON *v);

#endif
