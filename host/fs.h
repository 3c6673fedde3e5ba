/* SPDX-License-Identifier: MIT */
/* fs.h: reading files safely, for every layer that reads one (scene/json.c: scenes;
 * plugin/: plugin files). A FIFO or a device named where a file is expected would make
 * open() or read() block forever: files are opened without blocking and must be regular.
 * Knows nothing but the C library and the log. */
#ifndef HOST_FS_H
#define HOST_FS_H

#include <stddef.h>

/* Open path for reading without blocking on a FIFO or a device (O_NONBLOCK, then fstat:
 * regular files only; the descriptor is returned in blocking mode). -1 with the reason in
 * why otherwise ("cannot open: ...", "not a regular file: a FIFO"). */
int host_fs_open_regular(const char *path, char *why, size_t len);

#endif
