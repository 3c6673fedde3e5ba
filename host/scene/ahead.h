/* SPDX-License-Identifier: MIT */
/* ahead.h: a scene load's values lexed by a second thread, ahead of the plugins' reads.
 *
 * Pass two of a load hands each component value to its manager's read_component on the
 * loading thread (plugin code runs there only), one manager after another, entity by
 * entity: value number seq = m * n + i. Meanwhile this thread walks the same values in the
 * same order with a STRICT reader that records (jparse.h, host_jr_record): each object and
 * array checked whole, its numbers converted and its strings decoded into tokens, in a
 * ring (a string, number or literal is left to the loader: it reads one as fast as it
 * would take it, and the thread gets ahead meanwhile). The loader asks for value seq's
 * tokens when it comes to it: when they are there it reads the value TRUSTED with them
 * (nothing left to check, little left to lex); when they are not (a string, the thread is
 * behind, the value was unsound or too large) it reads as it would without this thread.
 * Either way the same numbers, strings and errors.
 *
 * The thread stays at most a ring ahead: the loader says where it is (host_ahead_at), and
 * the thread reuses the ring behind that. It touches the text, the value offsets and the
 * ring only (no plugin code, no world), and blocks every signal.
 */
#ifndef HOST_AHEAD_H
#define HOST_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jparse.h"

typedef struct host_ahead host_ahead;

/* Start reading ahead text[0..len): value seq = m * n + i starts at at[i * managers + m] - 1
 * (0: none), wanted only where want[m] (managers bools, copied). at must stay as it is
 * until host_ahead_stop. NULL (read everything in the caller) when there is no second CPU, or no
 * thread or memory to be had. */
host_ahead *host_ahead_start(const char *text, size_t len, const uint64_t *at, uint32_t n,
                             size_t managers, const bool *want);

/* The loader is at value seq: it is done with every value before it. */
void host_ahead_at(host_ahead *a, uint64_t seq);

/* Value seq's tokens, when the thread has read it and found it sound: true with *tok and
 * *count, valid until the loader moves past seq. Any seq at or after the loader's place
 * (a reference's target too). a may be NULL (false). */
bool host_ahead_get(host_ahead *a, uint64_t seq, const host_jr_token **tok, size_t *count);

/* Ask for the first 256 bytes of the value whose offset + 1 is at1 (0: none) to come from
 * memory meanwhile: the loader and the thread each a few values before they read one.
 * Always inlined: GCC 12 takes a function that only prefetches for one without side
 * effects and deletes the calls to it (when it is not inlined first), which left every
 * caller asking for nothing until session 14 (tests/check_prefetch.py). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void
host_ahead_prefetch(const char *text, uint64_t at1)
{
    if (!at1) return;
    const char *p = text + at1 - 1;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
    __builtin_prefetch(p + 192);
}

/* Stop the thread and free everything; *taken (may be NULL): how many values the loader
 * took from it. A NULL a is nothing. */
void host_ahead_stop(host_ahead *a, uint64_t *taken);

#endif
