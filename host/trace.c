/* SPDX-License-Identifier: MIT */
/* trace.c: the --trace file (trace.h): a head, slices separated by commas, a tail. */
#include "trace.h"

#include "log.h"
#include "world.h" /* host_now_ns */

ecs_status host_trace_open(host_trace *t, const char *path)
{
    host_trace_close(t);
    if (!(t->file = fopen(path, "w"))) return ECS_ERR_IO;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", t->file);
    t->first = true;
    t->origin_ns = host_now_ns();
    return ECS_OK;
}

void host_trace_close(host_trace *t)
{
    if (!t->file) return;
    fputs("\n]}\n", t->file);
    if (fclose(t->file) != 0) host_error("trace", "could not finish the trace file");
    t->file = NULL;
}

void host_trace_slice(host_trace *t, const char *name, const char *cat, uint64_t t0, uint64_t t1)
{
    if (!t->file) return;
    fprintf(t->file,
            "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
            "\"ts\":%.3f,\"dur\":%.3f}",
            t->first ? "" : ",", name, cat, (double)(t0 - t->origin_ns) / 1e3,
            (double)(t1 - t0) / 1e3);
    t->first = false;
}
