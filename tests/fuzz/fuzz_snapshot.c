/* SPDX-License-Identifier: MIT */
/* fuzz_snapshot.c: libFuzzer target for restoring a snapshot file (host/snapshot.c,
 * host/snapfmt.c, host/world/snapshot_core.c, entity.c) with the transform, debug_name and
 * mesh plugins loaded once as instrumented copies, so their snapshot_read is fuzzed too.
 *
 * Each input is a container whose checksum is made right first (the last 8 bytes: without
 * that nearly every input would stop at the checksum), then restored as a file is
 * (host_snapshot_restore: every byte checked). Properties:
 * - refused before any change: the world is as it was, byte for byte (its snapshot);
 * - restored: the world must run a frame, take a snapshot, restore that and run another
 *   frame (every link and handle the plugins read back is usable).
 * Each input starts from the demo world (restored from its snapshot after every input).
 * A broken property aborts, as does a crash, a leak or undefined behaviour.
 * Run: mkdir -p /tmp/new && build/tests/fuzz/fuzz_snapshot /tmp/new tests/fuzz/corpus_snapshot
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "log.h"
#include "scene.h"
#include "session.h"
#include "snapfmt.h"
#include "snapshot.h"
#include "world.h"

#if !defined(FUZZ_TRANSFORM_SO) || !defined(FUZZ_DEBUG_NAME_SO) || !defined(FUZZ_MESH_SO) ||       \
    !defined(FUZZ_DEMO_SCENE)
#error "tests/fuzz/meson.build defines the paths of the instrumented plugins and the demo"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fixture world;      /* the three plugins, loaded once */
static host_snapshot base; /* the demo world: each input starts from it */

static void cleanup(void)
{
    host_snapshot_free(&base);
    fixture_close(&world);
}

static void finding(const char *what)
{
    fprintf(stderr, "fuzz_snapshot: %s\n", what);
    abort();
}

/* A snapshot of the world now into *out (a finding when it cannot be taken). */
static void take(host_snapshot *out)
{
    char why[512];
    if (host_snapshot_take(world.s, out, why, sizeof why) != ECS_OK) finding(why);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    host_log_set_level((ecs_log_level)-1); /* quiet: one line per input is slow */
    const char *const plugins[] = {FUZZ_TRANSFORM_SO, FUZZ_DEBUG_NAME_SO, FUZZ_MESH_SO, NULL};
    if (fixture_open(&world, plugins) != 0 ||
        host_scene_load(world.s->scene, FUZZ_DEMO_SCENE) != ECS_OK)
        finding("cannot set up the world");
    take(&base);
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    bool changed;
    uint8_t *buf = malloc(size + 1);
    host_snapshot before = {NULL, 0, 0, 0}, after = {NULL, 0, 0, 0};
    if (!buf) return 0;
    memcpy(buf, data, size);
    if (size >= 56) host_snapfmt_seal(buf, size);
    take(&before);
    ecs_status s = host_snapshot_restore(world.s, buf, size, &changed, why, sizeof why);
    free(buf);
    if (s != ECS_OK && !changed) { /* refused: the world as it was, byte for byte */
        take(&after);
        if (after.size != before.size || memcmp(after.bytes, before.bytes, after.size) != 0)
            finding("a refused snapshot changed the world");
    }
    if (s == ECS_OK) {
        fixture_frames(&world, 1);
        take(&after);
        if (host_snapshot_restore_own(world.s, &after, &changed, why, sizeof why) != ECS_OK)
            finding(why);
        fixture_frames(&world, 1);
    }
    host_snapshot_free(&before), host_snapshot_free(&after);
    if (host_snapshot_restore_own(world.s, &base, &changed, why, sizeof why) != ECS_OK)
        finding(why); /* back to the demo for the next input */
    return 0;
}
