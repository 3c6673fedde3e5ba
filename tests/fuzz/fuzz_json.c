/* SPDX-License-Identifier: MIT */
/* fuzz_json.c: differential libFuzzer target for the host's JSON parser (host/scene/jparse.c)
 * against cJSON_ParseWithLength.
 *
 * Each input is parsed in malloc mode and in arena mode, exactly `size` bytes with no NUL
 * after them (so an overread is caught). Both modes must agree: the same tree, or the
 * same error at the same offset, inside the text, with a one-line message. When the
 * input is accepted it is valid JSON, so cJSON must accept it too and build the same tree
 * (types, keys, strings, valuedouble bit for bit, valueint, child/next/prev links). The
 * one known exception: cJSON skips a UTF-8 BOM only in texts longer than 4 bytes. Inputs
 * cJSON accepts and we refuse are cJSON being lenient (leading zeros, trailing commas,
 * control characters...): not checked. The read-ahead's recorder (host_jr_record) on the
 * same bytes: as sound as a reader that does not record, failing at the same byte with the
 * same error, and, for an object or array, recording the tokens the element by element
 * walk records (the value read inside an array: no one-walk path there), and read with
 * those tokens (arrays by array_f32 for 3 or 4 floats) giving what a reader of the text
 * gives, errors included. A broken property aborts,
 * as does a crash, a leak or undefined behaviour. Build: meson setup -Dfuzz=true with CC=clang
 * CXX=clang++ (tests/fuzz/meson.build); run (new inputs go to the scratch folder /tmp/new, not into
 * the repository): build/tests/fuzz/fuzz_json /tmp/new tests/fuzz/corpus_scene
 * -dict=tests/fuzz/scene.dict
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdump.h"
#include "jparse.h"
#include "jplain.h"
#include "json.h"

#define NAME "fuzz.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_json: %s:%d: broken: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Each next's prev is the one before it; the first's prev is the last. */
static bool linked_as_cJSON(const cJSON *first)
{
    const cJSON *last = first;
    for (const cJSON *c = first; c && c->next; c = c->next, last = c)
        if (c->next->prev != c) return false;
    return !first || first->prev == last;
}

/* Trees a (ours) and b (cJSON's) are identical. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
    if (a->type != b->type || !same_string(a->string, b->string) ||
        !same_string(a->valuestring, b->valuestring) || a->valueint != b->valueint ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 || !linked_as_cJSON(a->child))
        return false;
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
        if (!same_tree(x, y)) return false;
    return !x && !y;
}

enum { TAPE_TOKENS = 4096, TAPE_BYTES = 65536 };

/* The value at text[0..size) recorded (or only read, tape NULL) by a STRICT reader:
 * whether it was sound, where it ended, and its error. */
static bool record_text(host_jreader *r, const char *text, size_t size, host_jr_tape *tape,
                        size_t *end, size_t *err_at, host_jparse_status *err)
{
    host_jr_start(r, text, size, 0, HOST_JR_STRICT);
    host_jr_record(r, tape);
    ecs_json_reader *api = host_jr_api(r);
    bool ok = (api->skip)(api) && host_jr_complete(r);
    *end = host_jr_offset(r);
    *err_at = 0;
    *err = HOST_JPARSE_OK;
    if (!ok) host_jr_error(r, err_at, err, NULL);
    return ok;
}

/* The sound value text[0..size) read from its text (STRICT) and with its recorded tokens
 * (TRUSTED, as the loader reads what the read-ahead thread recorded), every array by
 * array_f32 for n floats: the same values, or the same error at the same byte. */
static void check_read_with_tokens(host_jreader *r, const char *text, size_t size,
                                   const host_jr_tape *tape, uint32_t n)
{
    static char dump[2][1 << 16];
    char message[2][512];
    size_t len[2], at[2];
    bool failed[2];
    for (int with = 0; with < 2; with++) {
        const char *m = NULL;
        host_jr_start(r, text, size, 0, with ? HOST_JR_TRUSTED : HOST_JR_STRICT);
        if (with) host_jr_use(r, tape->tok, tape->n);
        len[with] = 0;
        dump[with][0] = '\0';
        jdump_value(host_jr_api(r), n, dump[with], sizeof dump[with], &len[with]);
        at[with] = 0;
        failed[with] = host_jr_error(r, &at[with], NULL, &m);
        snprintf(message[with], sizeof message[with], "%s", failed[with] ? m : "");
    }
    CHECK(len[0] == len[1] && strcmp(dump[0], dump[1]) == 0);
    CHECK(failed[0] == failed[1] && at[0] == at[1] && strcmp(message[0], message[1]) == 0);
}

static void check_recording(const char *text, size_t size)
{
    static host_jr_token tok[2][TAPE_TOKENS];
    static char bytes[2][TAPE_BYTES];
    host_jreader *r = host_jr_new();
    CHECK(r);
    host_jr_tape one = {tok[0], 0, TAPE_TOKENS, bytes[0], 0, TAPE_BYTES, false};
    host_jr_tape walk = {tok[1], 0, TAPE_TOKENS, bytes[1], 0, TAPE_BYTES, false};
    size_t end[3], at[3];
    host_jparse_status err[3];
    bool ok = record_text(r, text, size, &one, &end[0], &at[0], &err[0]);
    bool plain = record_text(r, text, size, NULL, &end[1], &at[1], &err[1]);
    CHECK(ok == plain && at[0] == at[1] && err[0] == err[1] && (!ok || end[0] == end[1]));
    const char *first = host_json_skip_space(text, text + size); /* a BOM: none there */
    bool container = first < text + size && (*first == '{' || *first == '[');
    if (ok && container && !one.full &&
        host_json_skip_space(text + end[0], text + size) == text + size) {
        char *wrapped = malloc(size + 2); /* "[" text "]": the walk, at depth 1 */
        CHECK(wrapped);
        wrapped[0] = '[';
        if (size) memcpy(wrapped + 1, text, size);
        wrapped[size + 1] = ']';
        check_read_with_tokens(r, text, size, &one, 3 + (uint32_t)(size & 1));
        CHECK(record_text(r, wrapped, size + 2, &walk, &end[2], &at[2], &err[2]));
        CHECK(one.n == walk.n && one.full == walk.full);
        for (size_t k = 0; k < one.n; k++) {
            const host_jr_token *a = &one.tok[k], *b = &walk.tok[k];
            bool str = a->str != NULL, array = *a->at == '[';
            CHECK(a->at - text == b->at - (wrapped + 1) && a->end - text == b->end - (wrapped + 1));
            CHECK(str == (b->str != NULL) && (!str || strcmp(a->str, b->str) == 0));
            CHECK(!(str || array) || a->v.len == b->v.len);
            CHECK(str || array || memcmp(&a->v.number, &b->v.number, sizeof(double)) == 0);
        }
        free(wrapped);
    }
    host_jr_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    host_jparse_error e = {.status = HOST_JPARSE_OK}, e_arena = {.status = HOST_JPARSE_OK};
    host_json_arena *arena = host_json_arena_new(size);
    CHECK(arena);
    cJSON *ours = host_jparse(text, size, NULL, &e);
    cJSON *in_arena = host_jparse(text, size, arena, &e_arena);
    CHECK(!ours == !in_arena);
    if (!ours) {
        char msg[256], err[512];
        CHECK(e.status != HOST_JPARSE_OK && e.offset <= size);
        CHECK(e.status == e_arena.status && e.offset == e_arena.offset);
        host_jparse_describe(text, size, &e, msg, sizeof msg);
        CHECK(msg[0] && !strchr(msg, '\n') && !strchr(msg, '\r'));
        CHECK(!host_json_parse(NAME, text, size, err, sizeof err));
        CHECK(strncmp(err, NAME ":", strlen(NAME ":")) == 0);
    } else {
        char *copy = malloc(size + 1); /* cJSON gets its NUL: its overreads are not ours */
        CHECK(copy);
        if (size) memcpy(copy, text, size);
        copy[size] = '\0';
        cJSON *ref = cJSON_ParseWithLength(copy, size);
        bool short_bom = size <= 4 && size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0;
        CHECK(ref || short_bom);
        CHECK(!ref || same_tree(ours, ref));
        CHECK(!ref || same_tree(in_arena, ref));
        CHECK(!ours->prev && !ours->next && !in_arena->prev && !in_arena->next);
        cJSON_Delete(ref);
        free(copy);
    }
    cJSON_Delete(ours);
    host_json_arena_free(arena);
    check_recording(text, size);
    return 0;
}
