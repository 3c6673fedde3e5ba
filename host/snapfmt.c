/* SPDX-License-Identifier: MIT */
/* snapfmt.c: the snapshot container's writer and checking reader (snapfmt.h,
 * docs/snapshot-format.md). Little-endian, as the machine writes it: the magic's byte
 * order check refuses a file from a big-endian machine as "not a snapshot".
 *
 * Layout: header (48 bytes) | table: count entries of 32 bytes | names | padding to 64 |
 * section bytes, each starting 64-byte aligned | XXH3-64 of everything before it (8 bytes).
 * The checksum is xxHash's XXH3 (libxxhash): tens of GB/s, so a snapshot pays for its check
 * a fraction of what copying its bytes costs.
 */
#include "snapfmt.h"

#include <stdio.h>
#include <string.h>
#include <xxhash.h>

static const char MAGIC[8] = {'E', 'C', 'S', 'S', 'N', 'A', 'P', 0};

typedef struct file_head {
    char magic[8];
    uint32_t version, count;
    uint64_t total, frame, table_bytes, reserved;
} file_head;

typedef struct table_entry {
    uint32_t kind, version;
    uint64_t offset, size;
    uint32_t name_at, name_len;
} table_entry;

_Static_assert(sizeof(file_head) == 48, "header layout");
_Static_assert(sizeof(table_entry) == 32, "table layout");

static uint64_t align64(uint64_t n)
{
    return (n + 63u) & ~(uint64_t)63u;
}

/* Where section data starts: after header, table and names. */
static uint64_t data_start(const host_snap_section *s, uint32_t n)
{
    uint64_t at = sizeof(file_head) + (uint64_t)n * sizeof(table_entry);
    for (uint32_t k = 0; k < n; k++) at += s[k].name_len;
    return align64(at);
}

size_t host_snapfmt_size(const host_snap_section *s, uint32_t n)
{
    uint64_t at = data_start(s, n);
    for (uint32_t k = 0; k < n; k++) at = align64(at) + s[k].size;
    return (size_t)(at + sizeof(uint64_t));
}

void host_snapfmt_layout(void *buf, uint64_t frame, const host_snap_section *s, uint32_t n,
                         void **data)
{
    char *p = buf;
    uint64_t names = sizeof(file_head) + (uint64_t)n * sizeof(table_entry);
    uint64_t at = data_start(s, n);
    memset(p, 0, (size_t)at); /* padding too: the checksum sees no stray bytes */
    for (uint32_t k = 0; k < n; k++) {
        at = align64(at);
        table_entry e = {s[k].kind, s[k].version, at, s[k].size, (uint32_t)names, s[k].name_len};
        memcpy(p + sizeof(file_head) + k * sizeof e, &e, sizeof e);
        memcpy(p + names, s[k].name, s[k].name_len);
        names += s[k].name_len;
        data[k] = p + at;
        if (k + 1 < n)
            memset(p + at + s[k].size, 0, (size_t)(align64(at + s[k].size) - at - s[k].size));
        at += s[k].size;
    }
    file_head h = {{0},   HOST_SNAPFMT_VERSION,
                   n,     at + sizeof(uint64_t),
                   frame, (uint64_t)n * sizeof(table_entry),
                   0};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    memcpy(p, &h, sizeof h);
}

void host_snapfmt_seal(void *buf, size_t size)
{
    uint64_t sum = XXH3_64bits(buf, size - sizeof sum);
    memcpy((char *)buf + size - sizeof sum, &sum, sizeof sum);
}

/* Does table entry e lie inside a container of `size` bytes whose data starts at `start`? */
static bool entry_inside(const table_entry *e, uint64_t start, uint64_t size, uint64_t names_end)
{
    uint64_t end = size - sizeof(uint64_t);
    return e->kind >= HOST_SNAP_CORE && e->kind < HOST_SNAP_KIND_END && e->name_len > 0 &&
           e->name_len < 256 && e->name_at >= sizeof(file_head) && e->name_at <= names_end &&
           e->name_len <= names_end - e->name_at && e->offset >= start && e->offset <= end &&
           e->size <= end - e->offset;
}

bool host_snapfmt_open(const void *buf, size_t size, bool verify, host_snap_file *f, char *why,
                       size_t len)
{
    file_head h;
    if (size < sizeof h + sizeof(uint64_t) || memcmp(buf, MAGIC, sizeof MAGIC) != 0)
        return snprintf(why, len, "not an ecs-host snapshot (no ECSSNAP header)"), false;
    memcpy(&h, buf, sizeof h);
    if (h.version > HOST_SNAPFMT_VERSION)
        return snprintf(why, len, "format version %u is newer than this ecs-host's %u", h.version,
                        HOST_SNAPFMT_VERSION),
               false;
    if (h.version == 0 || h.total < sizeof h + sizeof(uint64_t))
        return snprintf(why, len, "bad header (format version %u)", h.version), false;
    if (h.total != size)
        return snprintf(why, len, "%s: %zu of %llu bytes",
                        size < h.total ? "truncated" : "too long", size,
                        (unsigned long long)h.total),
               false;
    uint64_t sum, want = verify ? XXH3_64bits(buf, size - sizeof sum) : 0;
    memcpy(&sum, (const char *)buf + size - sizeof sum, sizeof sum);
    if (verify && sum != want)
        return snprintf(why, len, "checksum mismatch (the file is damaged)"), false;
    uint64_t table_end = sizeof h + (uint64_t)h.count * sizeof(table_entry);
    if (h.count > (size - sizeof h) / sizeof(table_entry))
        return snprintf(why, len, "bad section table (%u sections)", h.count), false;
    for (uint32_t k = 0; k < h.count; k++) {
        table_entry e;
        memcpy(&e, (const char *)buf + sizeof h + k * sizeof e, sizeof e);
        if (!entry_inside(&e, table_end, size, size - sizeof(uint64_t)))
            return snprintf(why, len, "section %u lies outside the file", k), false;
    }
    *f = (host_snap_file){buf, size, h.count, h.frame};
    return true;
}

host_snap_section host_snapfmt_get(const host_snap_file *f, uint32_t k)
{
    table_entry e;
    memcpy(&e, f->buf + sizeof(file_head) + k * sizeof e, sizeof e);
    return (host_snap_section){e.kind,     e.version, f->buf + e.name_at,
                               e.name_len, e.size,    f->buf + e.offset};
}

bool host_snapfmt_find(const host_snap_file *f, uint32_t kind, const char *name,
                       host_snap_section *out)
{
    size_t n = strlen(name);
    for (uint32_t k = 0; k < f->count; k++) {
        host_snap_section s = host_snapfmt_get(f, k);
        if (s.kind == kind && s.name_len == n && memcmp(s.name, name, n) == 0)
            return *out = s, true;
    }
    return false;
}
