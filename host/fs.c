/* SPDX-License-Identifier: MIT */
/* fs.c: opening files the host reads (scenes, plugin files) without blocking on what is
 * not a regular file (fs.h). */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* What kind of file mode m is, for "not a regular file: ...". */
static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a folder"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a file";
}

int host_fs_open_regular(const char *path, char *why, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        host_format(why, len, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        host_format(why, len, "not a regular file: %s",
                    fstat(fd, &st) == 0 ? kind_of(st.st_mode) : strerror(errno));
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}
