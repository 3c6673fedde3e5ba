/* SPDX-License-Identifier: MIT */
/* trace.h: the --trace file: Chrome's trace-event JSON (open it in Perfetto), one complete
 * slice ("ph":"X") per manager update, system, scene load or save, reload.
 *
 * A host_trace is closed (file NULL) or open: the file holds the head and the slices so far;
 * closing writes the tail, so the file is valid JSON once closed. Times are host_now_ns
 * values, written relative to when the trace was opened.
 */
#ifndef HOST_TRACE_H
#define HOST_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ecs_plugin.h"

typedef struct host_trace {
    FILE *file;         /* NULL: no trace */
    uint64_t origin_ns; /* when it was opened */
    bool first;         /* no slice written yet (no comma before the next) */
} host_trace;

/* Start writing a trace into path (any trace open before is closed first). ECS_ERR_IO when
 * the file cannot be created (errno says why), the trace then closed. */
ecs_status host_trace_open(host_trace *t, const char *path);

/* Finish the file and close it; nothing when none is open. A failed write is logged. */
void host_trace_close(host_trace *t);

/* One slice [t0, t1] named name (JSON-safe text: a manager's or a step's name) in category
 * cat; nothing when no trace is open. */
void host_trace_slice(host_trace *t, const char *name, const char *cat, uint64_t t0, uint64_t t1);

/* Name the tracks of `threads` job threads: tid 1 "main" (where every other slice goes),
 * tid 2.. "ecs-job-1".. (metadata events, Perfetto's thread names). Right after opening. */
void host_trace_threads(host_trace *t, uint32_t threads);

/* What job thread `thread` (0: main) ran of one job, [t0, t1], `chunks` chunks: a slice of
 * category "job" on its track, named name (any text: made JSON-safe here). */
void host_trace_job(host_trace *t, const char *name, uint32_t thread, uint64_t t0, uint64_t t1,
                    uint32_t chunks);

#endif
