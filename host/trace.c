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

void host_trace_threads(host_trace *t, uint32_t threads)
{
    for (uint32_t i = 0; t->file && i < threads; i++) {
        fprintf(t->file,
                "%s\n{\"name\":\"thread_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":1,"
                "\"tid\":%u,\"args\":{\"name\":\"%s%.0u\"}}",
                t->first ? "" : ",", i + 1, i ? "ecs-job-" : "main", i);
        t->first = false;
    }
}

void host_trace_job(host_trace *t, const char *name, uint32_t thread, uint64_t t0, uint64_t t1,
                    uint32_t chunks)
{
    if (!t->file) return;
    char safe[80];
    size_t n = 0;
    for (const char *p = name ? name : "job"; *p && n + 1 < sizeof safe; p++)
        safe[n++] = (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? '_' : *p;
    safe[n] = '\0';
    fprintf(t->file,
            "%s\n{\"name\":\"%s\",\"cat\":\"job\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,"
            "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"chunks\":%u}}",
            t->first ? "" : ",", safe, thread + 1, (double)(t0 - t->origin_ns) / 1e3,
            (double)(t1 - t0) / 1e3, chunks);
    t->first = false;
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
