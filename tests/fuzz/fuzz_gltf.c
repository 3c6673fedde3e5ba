/* SPDX-License-Identifier: MIT */
/* fuzz_gltf.c: libFuzzer target for the glTF import (host/scene/gltf.c).
 *
 * Each input is a whole file handed to host_gltf_import_memory(): it is a .glb when it
 * starts with the magic "glTF" (so the .glb seeds of corpus_gltf/ reach the container
 * checks) and .gltf JSON otherwise. An import either returns a scene tree that the scene
 * loader and the plugins accept (check_scene: names, finite float numbers, unit rotations,
 * min <= max), or NULL with a message naming the file; anything else (a crash, a leak,
 * undefined behaviour, a bad result, a message without the file) is a finding.
 * Build: meson setup -Dfuzz=true with CC=clang (tests/fuzz/meson.build); run (new inputs
 * go to the scratch folder /tmp/new, not into the repository):
 *   build/tests/fuzz/fuzz_gltf /tmp/new tests/fuzz/corpus_gltf -dict=tests/fuzz/gltf.dict
 */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf.h"
#include "log.h"

#define NAME "fuzz.gltf"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    host_log_set_level(ECS_LOG_ERROR); /* no warning per input */
    return 0;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_gltf: %s:%d: the scene breaks: %s\n", __FILE__, __LINE__,        \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A name the plugins take: 1 (0 with allow_empty) to 255 bytes of UTF-8 without control
 * characters (a plain decoder: lead byte, continuation bytes, no overlong form). */
static bool name_ok(const cJSON *v, bool allow_empty)
{
    if (!cJSON_IsString(v)) return false;
    const unsigned char *p = (const unsigned char *)v->valuestring;
    size_t len = strlen(v->valuestring);
    if (len > 255 || (!len && !allow_empty)) return false;
    while (*p) {
        int n = *p < 0x80                 ? 1
                : *p >= 0xC2 && *p < 0xE0 ? 2
                : *p >= 0xE0 && *p < 0xF0 ? 3
                : *p >= 0xF0 && *p < 0xF5 ? 4
                                          : 0;
        uint32_t cp = n == 1 ? *p : n == 2 ? *p & 0x1Fu : n == 3 ? *p & 0x0Fu : *p & 0x07u;
        if (!n) return false;
        for (int k = 1; k < n; k++) {
            if ((p[k] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (p[k] & 0x3Fu);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
            return false;
        p += n;
    }
    return true;
}

/* An array of n numbers that are finite as floats, into out. */
static bool floats_ok(const cJSON *a, int n, float *out)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return false;
    int k = 0;
    for (const cJSON *x = a->child; x; x = x->next, k++) {
        if (!cJSON_IsNumber(x) || !(fabs(x->valuedouble) <= FLT_MAX)) return false;
        out[k] = (float)x->valuedouble;
    }
    return true;
}

static void check_transform(const cJSON *t)
{
    float v[4];
    const cJSON *parent = cJSON_GetObjectItemCaseSensitive(t, "parent");
    CHECK(floats_ok(cJSON_GetObjectItemCaseSensitive(t, "position"), 3, v));
    CHECK(floats_ok(cJSON_GetObjectItemCaseSensitive(t, "scale"), 3, v));
    CHECK(floats_ok(cJSON_GetObjectItemCaseSensitive(t, "rotation"), 4, v));
    CHECK(fabsf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3] - 1) < 1e-5f);
    CHECK(!parent || (cJSON_IsString(parent) && !strncmp(parent->valuestring, "node", 4)));
}

static void check_meshes(const cJSON *list)
{
    const cJSON *m;
    CHECK(cJSON_IsArray(list) && cJSON_GetArraySize(list) > 0);
    cJSON_ArrayForEach(m, list)
    {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(m, "bounds");
        const cJSON *material = cJSON_GetObjectItemCaseSensitive(m, "material");
        float lo[3], hi[3];
        CHECK(name_ok(cJSON_GetObjectItemCaseSensitive(m, "mesh"), false));
        CHECK(!material || name_ok(material, true));
        CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "visible")));
        CHECK(floats_ok(cJSON_GetObjectItemCaseSensitive(b, "min"), 3, lo));
        CHECK(floats_ok(cJSON_GetObjectItemCaseSensitive(b, "max"), 3, hi));
        CHECK(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]);
    }
}

/* The result is what the scene loader and the three plugins accept: {"version": 1,
 * "entities": [{"id": "node<i>", "debug_name"?, "transform", "mesh"?}]}. */
static void check_scene(const cJSON *scene)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(scene, "entities"), *e;
    CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(scene, "version")));
    CHECK(cJSON_IsArray(list));
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "debug_name");
        const cJSON *mesh = cJSON_GetObjectItemCaseSensitive(e, "mesh");
        CHECK(cJSON_IsString(id) && !strncmp(id->valuestring, "node", 4));
        CHECK(!name || name_ok(name, false));
        check_transform(cJSON_GetObjectItemCaseSensitive(e, "transform"));
        if (mesh) check_meshes(mesh);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    cJSON *scene = host_gltf_import_memory(NAME, data, size, err, sizeof err);
    if (scene)
        check_scene(scene);
    else
        CHECK(strncmp(err, NAME, strlen(NAME)) == 0); /* every message names the file */
    cJSON_Delete(scene);
    return 0;
}
