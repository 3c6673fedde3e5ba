/* SPDX-License-Identifier: MIT */
/* snapfmt.h: the snapshot container (docs/snapshot-format.md): a header, a table of named
 * sections (kind, layout version, offset, size), the sections' bytes, a checksum. Bytes
 * only: it knows nothing of the world, files or plugins (host/snapshot.c fills and reads
 * it). Invariant of a container that host_snapfmt_open accepted: every section lies inside
 * it, after the table, and the checksum matched, so a reader may trust offsets and sizes.
 */
#ifndef HOST_SNAPFMT_H
#define HOST_SNAPFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_SNAPFMT_VERSION 1u

typedef enum host_snap_kind {
    HOST_SNAP_CORE = 1,   /* the world core's part (snapshot_core.h) */
    HOST_SNAP_BINARY = 2, /* a manager's snapshot_write bytes; version: its snapshot_version */
    HOST_SNAP_JSON = 3,   /* a manager's components as a scene document (JSON path) */
    HOST_SNAP_PSTATE = 4, /* a plugin's own state as JSON (ecs_host.plugin_state) */
    HOST_SNAP_KEPT = 5,   /* the scene store: scene ids and kept components, as JSON */
    HOST_SNAP_KIND_END
} host_snap_kind;

typedef struct host_snap_section {
    uint32_t kind, version;
    const char *name; /* NUL-free, at most 255 bytes; name_len of them */
    uint32_t name_len;
    uint64_t size;
    const void *data; /* reading: inside the container */
} host_snap_section;

/* The bytes of a container of n sections with these names and sizes (data unused). */
size_t host_snapfmt_size(const host_snap_section *s, uint32_t n);

/* Lay out a container in buf (host_snapfmt_size bytes for the same sections): header, table,
 * names. *data[k] is where section k's bytes go (64-byte aligned from buf's start); fill
 * them, then host_snapfmt_seal. */
void host_snapfmt_layout(void *buf, uint64_t frame, const host_snap_section *s, uint32_t n,
                         void **data);

/* Write the checksum of buf[0..size) (a laid-out container, its sections filled): before it
 * goes to a file. */
void host_snapfmt_seal(void *buf, size_t size);

/* A container being read. */
typedef struct host_snap_file {
    const char *buf;
    size_t size;
    uint32_t count; /* sections */
    uint64_t frame;
} host_snap_file;

/* Check buf[0..size) (magic, format version, sizes, every section inside, and with verify
 * the checksum: bytes from a file; a container this process made and kept needs none) into
 * *f. True, or false with the reason in why ("truncated: 1200 of 4096 bytes", "checksum
 * mismatch", "format version 7 is newer than this ecs-host's 1", ...). */
bool host_snapfmt_open(const void *buf, size_t size, bool verify, host_snap_file *f, char *why,
                       size_t len);

/* Section k (< f->count) of an opened container. */
host_snap_section host_snapfmt_get(const host_snap_file *f, uint32_t k);

/* The section of this kind and name, or false. */
bool host_snapfmt_find(const host_snap_file *f, uint32_t kind, const char *name,
                       host_snap_section *out);

#endif
