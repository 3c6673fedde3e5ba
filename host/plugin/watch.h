/* SPDX-License-Identifier: MIT */
/* watch.h: noticing new builds of plugins in PLUGIN_DIR (and its subfolders, one level).
 *
 * inotify reports close-after-write, moved-in, created and deleted files (GNU ld deletes,
 * creates and writes in place; lld writes a temporary file and renames it; cp rewrites
 * the same inode); where inotify is not available (or --poll), the folder is scanned on a
 * timer and each file's device, inode, size and nanosecond mtime are compared for
 * inequality. Either way a file is reported only after a quiet period without further
 * change, never while a writer still has it open (inotify) or while it is empty, and
 * only when its state differs from the one last reported: a partial file that appears
 * and is deleted again is a logged non-event. A deletion counts only after a grace period
 * (two seconds) without the file: lld deletes its output when a link starts. A folder
 * that is not there (at the start, or deleted since) is looked for every poll period and
 * watched again once it is back.
 */
#ifndef HOST_WATCH_H
#define HOST_WATCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct host_watch host_watch;

/* Watch dir; the current files are the baseline (not reported). NULL when memory ran out.
 * force_poll: scan every poll_ns instead of using inotify. */
host_watch *host_watch_new(const char *dir, bool force_poll, uint64_t quiet_ns, uint64_t poll_ns);
void host_watch_free(host_watch *w);

/* True when inotify is in use (false: polling). */
bool host_watch_inotify(const host_watch *w);

/* True while the folder, not there when the watch began, has not appeared: it is looked
 * for every poll period, as a folder that was deleted is, and its files are new ones. */
bool host_watch_absent(const host_watch *w);

/* Is a change of some file still waiting for its quiet period (a build still at work)?
 * The reloader holds files that settled meanwhile, to load them together in dependency
 * order. */
bool host_watch_busy(const host_watch *w);

/* The files (relative to dir, e.g. "mesh/mesh.so") whose state settled on something new
 * since the last call, NULL-terminated, valid until the next call; *changed_at receives
 * when the first of them was first seen changing (for reload timings). Never blocks. */
const char *const *host_watch_poll(host_watch *w, uint64_t now_ns, uint64_t *changed_at);

#endif
