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
 * control characters...): not checked. A broken property aborts, as does a crash, a
 * leak or undefined behaviour.
 * Build: meson setup -Dfuzz=true with CC=clang CXX=clang++ (tests/fuzz/meson.build); run
 * (new inputs go to the scratch folder /tmp/new, not into the repository):
 *   build/tests/fuzz/fuzz_json /tmp/new tests/fuzz/corpus_scene -dict=tests/fuzz/scene.dict
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jparse.h"
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
    return 0;
}
