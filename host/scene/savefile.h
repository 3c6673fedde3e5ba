/* SPDX-License-Identifier: MIT */
/* savefile.h: a file written whole or not at all (savefile.c): the scene writer's output,
 * streamed through a spool, or raw bytes. */
#ifndef HOST_SAVEFILE_H
#define HOST_SAVEFILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/uio.h>

#include "ecs_plugin.h"
#include "spool.h"

/* A save's file: a temporary file in the target's folder, renamed over the target when
 * everything was written. A symlink is written through to its target; anything but a
 * regular file (or nothing) is refused; an existing file keeps its mode (and, for root,
 * its owner); a new one gets 0666 & ~umask. On any failure the old file is untouched and
 * the temporary file removed. */
typedef struct savefile {
    const char *path; /* as the caller named it (messages) */
    char target[PATH_MAX];
    char *tmp;
    int fd;
    host_spool *spool; /* writes the text, laying out its deferred floats (spool.h) */
} savefile;

/* Check path and create the temporary file (raw: bytes written as they are, no spool of
 * text). ECS_OK, or an error already reported. */
ecs_status savefile_open(savefile *f, const char *path, bool raw);

/* Append iov[0..n_iov) to the file, through its spool. After a failed write nothing more is
 * written and the commit fails. */
void savefile_write(savefile *f, const struct iovec *iov, int n_iov);

/* Finish the file: with `keep` (everything was captured), its mode, fsync and the rename;
 * else (or when anything fails) the temporary file is removed and the old file stays. The
 * failure of a write, the mode or the rename is reported here. */
ecs_status savefile_close(savefile *f, bool keep);

#endif
