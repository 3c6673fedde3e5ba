/* SPDX-License-Identifier: MIT */
/* plugin_file.h: checking a plugin file before anything maps it.
 *
 * dlopen() maps a file's segments as its program headers say and reads them; a file cut
 * short (a copy interrupted, a linker still writing) makes that a SIGBUS inside dlopen, and
 * a FIFO or a device makes open() block or read forever. So the host opens a candidate
 * without blocking, requires a regular file, and reads the ELF header and program headers
 * itself: class, data encoding and machine of this host, a shared object (ET_DYN), header
 * tables inside the file, and every PT_LOAD and PT_DYNAMIC range inside the file.
 */
#ifndef HOST_PLUGIN_FILE_H
#define HOST_PLUGIN_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Open path without blocking and check it as above. True when dlopen may map it; false
 * with the reason in why ("truncated: segment 2 ends at byte 16384, the file has 10000",
 * "not a regular file: a FIFO", "cannot open: Permission denied", ...). */
bool host_elf_check_path(const char *path, char *why, size_t len);

/* The same for a file open on fd (its position is not used). */
bool host_elf_check_fd(int fd, char *why, size_t len);

#endif
