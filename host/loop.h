/* SPDX-License-Identifier: MIT */
/* loop.h: the live loop (--loop A:B, the inspector's loop): a snapshot after frame A, the
 * frames up to B, the snapshot restored, again; a reload during the loop takes effect at
 * its start (the world restored from the loop's snapshot with the old code, then the new
 * build swapped in as any reload, then the loop's snapshot taken again with it), so the new
 * code replays the same frames. Invariant: held is true exactly while snap holds the world
 * as it was after frame `from`.
 */
#ifndef HOST_LOOP_H
#define HOST_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

typedef struct host_session host_session;

typedef struct host_loop {
    host_session *hs;
    int64_t from, to; /* from < 0: no loop */
    host_snapshot snap;
    bool held;
    bool swapped;     /* a reload restored the start: take the snapshot again after it */
    char plugin[128]; /* the plugin whose reload that was */
    uint64_t passes;  /* times the loop went back to its start */
    char said[200];   /* what it last said of itself ("replaying frames ..."), for the page */
} host_loop;

/* A loop over frames (from, to] of hs; from < 0: none (every call does nothing). */
void host_loop_init(host_loop *l, host_session *hs, int64_t from, int64_t to);

/* At a frame boundary: at frame `from`, take the loop's snapshot; at frame `to`, restore
 * it; a world already past `from` (a --restore of a later frame) never loops (one warning).
 * False when the snapshot or the restore failed (said in the log; the loop has stopped,
 * frames go on). */
bool host_loop_boundary(host_loop *l);

/* The reloader's on_swap hook (reload.h): arg is the loop. Restores the loop's start before
 * plugin's new build is tried. */
void host_loop_before_swap(void *arg, const char *plugin);

/* After the reloader's poll: when a reload restored the start, take the snapshot again with
 * the new code and say "replaying frames A-B with NAME VERSION". */
void host_loop_after_reloads(host_loop *l);

/* Stop the loop and free its snapshot. */
void host_loop_free(host_loop *l);

#endif
