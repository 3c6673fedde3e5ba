/* json.c: JSON files through cJSON, with file:line:col errors (json.h). */
#include "json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void host_json_position(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *c = text; c < at && *c; c++) {
        if (*c == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

const char *host_json_type_name(const cJSON *v)
{
    if (!v) return "nothing";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

/* The whole file in a NUL-terminated buffer; NULL with err set on failure. */
static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory, expected a JSON file", path);
        fclose(f);
        return NULL;
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1 || feof(f)) break;
        char *bigger = realloc(buf, cap * 2); /* the file grew while we read it */
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

cJSON *host_json_read_file(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = read_all(path, &len, err, errlen);
    if (!text) return NULL;
    size_t skip = strspn(text, " \t\r\n");
    if (skip == len) {
        snprintf(err, errlen, "%s: the file is empty, expected a JSON value", path);
        free(text);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        if (!at || at < text || at > text + len) at = text + len;
        int line, col;
        host_json_position(text, at, &line, &col);
        int n = (int)strcspn(at, "\r\n"); /* one log line: stop at the line's end */
        if (n > 20) n = 20;
        if (*at == '\0')
            snprintf(err, errlen, "%s:%d:%d: JSON syntax error at the end of the file", path, line,
                     col);
        else if (n == 0)
            snprintf(err, errlen, "%s:%d:%d: JSON syntax error at the end of the line", path, line,
                     col);
        else
            snprintf(err, errlen, "%s:%d:%d: JSON syntax error near '%.*s'", path, line, col, n,
                     at);
    } else if (end && end[strspn(end, " \t\r\n")] != '\0') {
        int line, col;
        end += strspn(end, " \t\r\n");
        host_json_position(text, end, &line, &col);
        snprintf(err, errlen, "%s:%d:%d: unexpected text after the JSON value", path, line, col);
        cJSON_Delete(root);
        root = NULL;
    }
    free(text);
    return root;
}
