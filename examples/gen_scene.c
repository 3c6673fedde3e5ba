/* SPDX-License-Identifier: MIT */
/* gen_scene.c: gen-scene, a generator of large scene files for benchmarks and tests.
 *
 *     gen-scene N [--meshes 0|1|2] [--seed S] [--tree T] > scene.json
 *
 * Writes a scene (docs/scene-format.md) of N entities, each with a debug name and a
 * transform, in trees of T nodes (default 1000: BENCH.md's W6 trees), created tree by
 * tree, breadth-first inside a tree: node k > 0 of a tree has parent (k - 1) / 10, so
 * parents always come before their children. With --meshes M, every entity also gets M
 * meshes. The output depends only on the arguments: the same N, M, S and T give the same
 * bytes on every machine.
 *
 * Local transforms follow BENCH.md ("Deterministic data"): one xorshift64* stream seeded
 * with S (default 0x1234567, the benchmarks' seed), per entity position, quaternion
 * (normalized by 6 Newton steps), scale. Meshes draw from a second stream, so adding
 * them leaves the transforms as they were. Floats are written with the fewest digits that
 * read back to the same float.
 *
 * Exit status: 0 ok, 1 the output could not be written, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 0x1234567u
#define DEFAULT_TREE 1000u
#define MAX_ENTITIES 4000000u /* below the host's 2^22 - 1 live entities */
#define BRANCHING    10u

static const char usage[] =
    "usage: gen-scene N [--meshes 0|1|2] [--seed S] [--tree T] > scene.json\n"
    "  N            number of entities (0 to 4000000), each with a debug name and a transform\n"
    "  --meshes M   meshes per entity (default 0)\n"
    "  --seed S     seed of the random stream (default 0x1234567, the benchmarks' seed)\n"
    "  --tree T     nodes per tree, breadth-first, 10 children per node (default 1000)\n";

/* ---- BENCH.md's random numbers: xorshift64* ---- */

static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* A float in [0, 1). */
static float rng_float(uint64_t *state)
{
    return (float)(rng_next(state) >> 40) * (1.0f / 16777216.0f);
}

/* ---- writing ---- */

/* Write f with the fewest significant digits that read back to f ("0.1", not
 * "0.100000001"). Starting at 6 digits loses nothing: %g drops trailing zeros, and a float
 * that a shorter decimal reads back to is far closer to it than 6-digit rounding can
 * move, so "%.6g" already prints that shorter decimal. */
static void put_float(FILE *out, float f)
{
    char buf[32];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    fputs(buf, out);
}

static void put_floats(FILE *out, const float *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        put_float(out, v[i]);
    }
    fputc(']', out);
}

/* The local transform of the next entity, drawn in BENCH.md's order. */
static void put_transform(FILE *out, uint64_t *rng)
{
    float pos[3], q[4], scale[3];
    for (int i = 0; i < 3; i++) pos[i] = 3.0f * (rng_float(rng) * 2.0f - 1.0f);
    for (int i = 0; i < 3; i++) q[i] = rng_float(rng) - 0.5f;
    q[3] = rng_float(rng) + 0.5f;
    float n = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], inv = 1.0f;
    for (int k = 0; k < 6; k++) inv = inv * (1.5f - 0.5f * n * inv * inv);
    for (int i = 0; i < 4; i++) q[i] *= inv;
    for (int i = 0; i < 3; i++) scale[i] = 3.0f * (0.9f + 0.2f * rng_float(rng));
    fputs("\"transform\": {\"position\": ", out);
    put_floats(out, pos, 3);
    fputs(", \"rotation\": ", out);
    put_floats(out, q, 4);
    fputs(", \"scale\": ", out);
    put_floats(out, scale, 3);
}

/* One mesh object: a resource out of 16, a material out of 8, a box around the origin. */
static void put_mesh(FILE *out, uint64_t *rng)
{
    uint64_t r = rng_next(rng);
    float half[3];
    for (int i = 0; i < 3; i++) half[i] = 0.25f + rng_float(rng);
    float lo[3] = {-half[0], -half[1], -half[2]};
    fprintf(out,
            "{\"mesh\": \"props/prop%02u.mesh\", \"material\": \"materials/m%u\", "
            "\"visible\": %s, \"bounds\": {\"min\": ",
            (unsigned)(r & 15u), (unsigned)((r >> 4) & 7u), (r >> 7) % 10u ? "true" : "false");
    put_floats(out, lo, 3);
    fputs(", \"max\": ", out);
    put_floats(out, half, 3);
    fputs("}}", out);
}

static void put_entity(FILE *out, uint32_t i, uint32_t tree, int meshes, uint64_t *rng,
                       uint64_t *mesh_rng)
{
    uint32_t k = i % tree, root = i - k;
    fprintf(out,
            "    {\"id\": \"n%" PRIu32 "\", \"debug_name\": \"tree %" PRIu32 " node %" PRIu32
            "\", ",
            i, i / tree, k);
    put_transform(out, rng);
    if (k > 0) fprintf(out, ", \"parent\": \"n%" PRIu32 "\"", root + (k - 1) / BRANCHING);
    fputc('}', out);
    if (meshes > 0) {
        fputs(", \"mesh\": [", out);
        for (int m = 0; m < meshes; m++) {
            if (m) fputs(", ", out);
            put_mesh(out, mesh_rng);
        }
        fputc(']', out);
    }
    fputc('}', out);
}

/* ---- arguments ---- */

typedef struct options {
    uint32_t n, tree;
    int meshes;
    uint64_t seed;
} options;

/* A whole number of digits only (base 10, or 0x hex) in [0, max]; false otherwise. */
static bool parse_number(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (!s || !(s[0] >= '0' && s[0] <= '9')) return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max) return false;
    *out = v;
    return true;
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "gen-scene: %s%s%s%s\n%s", what, arg ? " '" : "", arg ? arg : "",
            arg ? "'" : "", usage);
    return 2;
}

/* Fill *o from argv. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, options *o)
{
    *o = (options){0, DEFAULT_TREE, 0, DEFAULT_SEED};
    bool have_n = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--meshes")) {
            if (i + 1 >= argc || !parse_number(argv[++i], 2, &v))
                return usage_error("--meshes needs 0, 1 or 2", NULL);
            o->meshes = (int)v;
        } else if (!strcmp(a, "--seed")) {
            if (i + 1 >= argc || !parse_number(argv[++i], UINT64_MAX, &v))
                return usage_error("--seed needs a whole number", NULL);
            o->seed = v ? v : DEFAULT_SEED; /* xorshift never leaves 0 */
        } else if (!strcmp(a, "--tree")) {
            if (i + 1 >= argc || !parse_number(argv[++i], MAX_ENTITIES, &v) || v == 0)
                return usage_error("--tree needs a whole number from 1 to 4000000", NULL);
            o->tree = (uint32_t)v;
        } else if (!have_n && parse_number(a, MAX_ENTITIES, &v)) {
            o->n = (uint32_t)v;
            have_n = true;
        } else {
            return usage_error(have_n || a[0] == '-'
                                   ? "unexpected argument"
                                   : "N must be a whole number from 0 to 4000000:",
                               a);
        }
    }
    return have_n ? -1 : usage_error("missing N", NULL);
}

int main(int argc, char **argv)
{
    options o;
    int code = parse_args(argc, argv, &o);
    if (code >= 0) return code;
    FILE *out = stdout;
    static char buffer[1 << 16];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    uint64_t rng = o.seed, mesh_rng = o.seed ^ 0x9E3779B97F4A7C15ull;
    if (!mesh_rng) mesh_rng = DEFAULT_SEED;
    fprintf(out,
            "{\n  \"version\": 1,\n  \"generator\": {\"program\": \"gen-scene\", \"entities\": "
            "%" PRIu32 ", \"meshes\": %d, \"seed\": \"%#" PRIx64 "\", \"tree\": %" PRIu32
            "},\n  \"entities\": [",
            o.n, o.meshes, o.seed, o.tree);
    for (uint32_t i = 0; i < o.n; i++) {
        fputs(i ? ",\n" : "\n", out);
        put_entity(out, i, o.tree, o.meshes, &rng, &mesh_rng);
    }
    fputs(o.n ? "\n  ]\n}\n" : "]\n}\n", out);
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "gen-scene: cannot write the scene: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
