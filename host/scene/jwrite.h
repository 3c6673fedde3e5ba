/* SPDX-License-Identifier: MIT */
/* jwrite.h: JSON text out, fast, in the layout of cJSON_Print: members one per line,
 * indented with tabs, "key":<TAB>value, array elements separated by ", ". A scene saved
 * through managers' write_component and one saved through cJSON trees are the same
 * bytes, and files written before this writer existed read and save unchanged.
 *
 * Numbers are the shortest text that reads back as exactly the same double (or float),
 * laid out as printf's %.15g would lay them out (%.17g past 15 digits): cJSON's own
 * printer tries 15 digits and accepts them when they read back "nearly" equal, which
 * loses the last bits of some doubles; this writer never does. NaN and infinities have
 * no JSON form: the writer's entries refuse them, in a cJSON value too (a plugin's
 * mistake, reported; host_json_number_text alone writes null, as cJSON does).
 *
 * The writer refuses whatever the host's reader refuses, so a save always loads: NaN and
 * infinities, nesting deeper than a scene may hold, and a key twice in one object (cJSON
 * keeps both and prints both). */
#ifndef HOST_JWRITE_H
#define HOST_JWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ecs_plugin.h"
#include "jparse.h"

struct cJSON;

/* Nesting inside one written value: the parser's limit for a whole file (jparse.h) less
 * the three levels around a component (the document, "entities", the entity), so every
 * save loads back; one limit for both. */
#define HOST_JW_MAX_LEVELS (HOST_JPARSE_MAX_DEPTH - 3)

typedef struct host_jwriter {
    ecs_json_writer api; /* what a manager's write_component gets */
    char *buf;           /* the text so far (not NUL-terminated) */
    size_t len, cap;
    /* the value being written */
    int base;     /* tabs of the level the value sits at */
    int level;    /* open containers */
    bool done;    /* the value is complete */
    bool key_due; /* inside an object: a key comes next */
    uint8_t is_object[HOST_JW_MAX_LEVELS];
    uint32_t items[HOST_JW_MAX_LEVELS];
    const char *error; /* the first mistake (a static string or detail), or NULL */
    bool no_memory;
    /* Where each key of the open objects stands in buf (the text between its quotes, as
     * escaped: one text per key), an object's keys the last items[] entries: checked when
     * the object closes, never twice in one (a load refuses that). */
    struct host_jw_key_at {
        size_t at, n;
    } * keys;
    size_t nkeys, capkeys;
    char detail[96]; /* the error naming a duplicate key */
    /* entity(): e's scene id, or NULL for a dead one */
    const char *(*id_of)(void *ctx, ecs_entity e);
    void *ctx;
    /* Floats (number_f32, array_f32) are not laid out here but written as HOST_JW_F32 and
     * their 4 bytes, for host_jw_expand to lay out later (a save's writer thread). JSON
     * text never holds that byte: strings escape it. */
    bool defer_f32;
} host_jwriter;

#define HOST_JW_F32 '\x01' /* a deferred float: this byte, then the float's 4 bytes */

/* Expands deferred floats, keeping a token cut at the end of one piece for the next. */
typedef struct host_jw_expander {
    unsigned char part[5]; /* the bytes of a cut token so far */
    uint32_t have;
} host_jw_expander;

/* The text of in[0..n) into out, each deferred float laid out (a token cut at the end of
 * in is finished by the next call); returns the bytes written. out must hold
 * HOST_JW_EXPANDED(n). */
#define HOST_JW_EXPANDED(n) ((n)*4 + 64)
size_t host_jw_expand(host_jw_expander *x, const char *in, size_t n, char *out);

void host_jw_init(host_jwriter *w);
void host_jw_free(host_jwriter *w);

/* Start a new value at the end of the text, at indentation `base` (the number of
 * containers around it in the whole document). */
void host_jw_start(host_jwriter *w, int base);
/* After the value: true when it is complete and no mistake or memory failure happened;
 * otherwise w->error says why ("out of memory" included). A value never started (nothing
 * written) is fine: check w->len. */
bool host_jw_finish(host_jwriter *w);

/* Append raw bytes / a JSON string literal (quoted and escaped as cJSON does). */
void host_jw_raw(host_jwriter *w, const char *s, size_t n);
void host_jw_quoted(host_jwriter *w, const char *s);
/* Append an object member's key: [","] "\n" tabs "key":<TAB>. */
void host_jw_key(host_jwriter *w, bool comma, int tabs, const char *key);
/* Append "\n" and `tabs` tabs. */
void host_jw_newline(host_jwriter *w, int tabs);
/* Make room for n more bytes; false (and no_memory) when memory ran out. */
bool host_jw_reserve(host_jwriter *w, size_t n);

/* The text of x: shortest round trip in %.15g / %.17g layout, "-0" for -0.0, "null" for
 * NaN and infinities. out must hold 32 bytes; returns the length. */
size_t host_json_number_text(double x, char *out);
/* The same for a float, from its own shortest digits (at most 9). */
size_t host_json_f32_text(float x, char *out);

/* cJSON_Print(v) for a whole document, plus a final newline, into a new malloc'd,
 * NUL-terminated string (*len bytes before the NUL); NULL when memory ran out. */
char *host_json_print(const struct cJSON *v, size_t *len);

#endif
