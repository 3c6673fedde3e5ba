/* SPDX-License-Identifier: MIT */
/* spool.h: a file written by a thread of its own, for a save.
 *
 * The caller hands over text (copied into one of four 256 KiB slots) and goes on capturing
 * while the thread lays out the deferred floats in it (host_jw_expand: a float's shortest
 * digits are a third of a save's time) and writes it to the file. The text reaches the
 * file in the order it was handed over, as one stream (a float cut between two pieces is
 * joined). After the first failed write nothing more is written; host_spool_finish says
 * which errno it was. Where no thread can be started the same work runs in the caller, at
 * each full slot.
 *
 * Threads: host_spool_write and host_spool_finish are the caller's (one thread); the
 * spool's thread touches only the slots handed over, the file and its own buffer, and
 * blocks every signal (they stay the main thread's).
 */
#ifndef HOST_SPOOL_H
#define HOST_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct host_spool host_spool;

/* A spool writing to fd (left open), or NULL when memory ran out. */
host_spool *host_spool_start(int fd);

/* Append p[0..n) to the stream. */
void host_spool_write(host_spool *s, const void *p, size_t n);

/* True when the thread keeps up: at most one slot handed over waits for it. The caller can
 * then leave its next piece's floats to the thread (false without a thread: the caller
 * does all the work anyway). */
bool host_spool_keeps_up(host_spool *s);

/* Write what is left, wait for the thread and free the spool: 0 when everything was
 * written, else the errno of the first failed write (EIO for a write of 0 bytes, or a float
 * cut at the very end). A NULL spool is 0. */
int host_spool_finish(host_spool *s);

#endif
