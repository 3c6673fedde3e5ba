/* SPDX-License-Identifier: MIT */
/* savefile.c: writing a file so that a failure never harms the old one (savefile.h): a
 * temporary file beside the target, renamed over it when everything was written; the
 * target checked first (host_scene_check_target, scene.h), temporary files of killed saves
 * swept, the mode kept. Used by scene saves and snapshots (host_scene_write_bytes). */
#include "savefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"
#include "scene.h"

/* The prefix of the temporary files of saves of `name` (a basename), in its folder:
 * ".ecs-save-<FNV-1a 64 of name, hex>-": short enough beside any name the file system
 * allows, and the same for every save of that file, so the next save finds stale ones. */
static void temp_prefix(const char *name, char *out, size_t size)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    snprintf(out, size, ".ecs-save-%016llx-", (unsigned long long)h);
}

/* Remove the temporary files a save of the same file left when it was killed: named with
 * prefix, then the pid of a process that is gone, ours, regular files (never followed). */
static void sweep_temp_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = strlen(prefix);
    while (d && (de = readdir(d))) {
        int pid = 0;
        struct stat st;
        if (strncmp(de->d_name, prefix, n) != 0 || sscanf(de->d_name + n, "%d-", &pid) != 1 ||
            pid <= 0 || (kill(pid, 0) != 0 && errno != ESRCH) || kill(pid, 0) == 0)
            continue; /* not one of ours, or its writer may still be at work */
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid() && unlinkat(dirfd(d), de->d_name, 0) == 0)
            host_info("scene", "%s/%s: removed, left by a save that was stopped (pid %d)", dir,
                      de->d_name, pid);
    }
    if (d) closedir(d);
}

ecs_status host_scene_check_target(const char *path, char *resolved, size_t size, char *why,
                                   size_t len)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) { /* written through to its target */
        char *real = realpath(path, NULL);
        if (!real) {
            host_format(why, len, "a symlink to nothing (%s): not written", strerror(errno));
            return ECS_ERR_BAD_VALUE;
        }
        snprintf(resolved, size, "%s", real);
        free(real);
    } else {
        snprintf(resolved, size, "%s", path);
    }
    if (stat(resolved, &st) == 0 && !S_ISREG(st.st_mode)) {
        host_format(why, len, "not a regular file (%s): a save replaces only a file",
                    S_ISDIR(st.st_mode)    ? "a folder"
                    : S_ISCHR(st.st_mode)  ? "a character device"
                    : S_ISBLK(st.st_mode)  ? "a block device"
                    : S_ISFIFO(st.st_mode) ? "a FIFO"
                                           : "a socket");
        return ECS_ERR_BAD_VALUE;
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(resolved, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - resolved) + (slash == resolved) : 1,
             slash ? resolved : ".");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        host_format(why, len, "its folder %s does not exist", dir);
        return ECS_ERR_IO;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        host_format(why, len, "its folder %s is not writable: %s", dir, strerror(errno));
        return ECS_ERR_IO;
    }
    return ECS_OK;
}

/* Check path and create the temporary file (raw: bytes written as they are, no spool of
 * text). ECS_OK, or an error already reported. */
ecs_status savefile_open(savefile *f, const char *path, bool raw)
{
    char why[PATH_MAX + 128], dir[PATH_MAX], prefix[64];
    *f = (savefile){.path = path, .fd = -1};
    ecs_status s = host_scene_check_target(path, f->target, sizeof f->target, why, sizeof why);
    if (s != ECS_OK) {
        host_error("scene", "%s: %s (the old file, if any, is untouched)", path, why);
        return s;
    }
    const char *slash = strrchr(f->target, '/'), *name = slash ? slash + 1 : f->target;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - f->target) + (slash == f->target) : 1,
             slash ? f->target : ".");
    temp_prefix(name, prefix, sizeof prefix);
    sweep_temp_files(dir, prefix);
    size_t n = strlen(dir) + strlen(prefix) + 32;
    if (!(f->tmp = malloc(n))) return ECS_ERR_NO_MEMORY;
    snprintf(f->tmp, n, "%s/%s%d-XXXXXX", dir, prefix, (int)getpid());
    if ((f->fd = mkstemp(f->tmp)) >= 0 && (raw || (f->spool = host_spool_start(f->fd))))
        return ECS_OK;
    s = f->fd >= 0 ? ECS_ERR_NO_MEMORY : ECS_ERR_IO;
    if (f->fd >= 0)
        close(f->fd), unlink(f->tmp);
    else
        host_error("scene", "%s: cannot create a temporary file beside it: %s", path,
                   strerror(errno));
    free(f->tmp);
    f->tmp = NULL;
    return s;
}

/* Append iov[0..n_iov) to the file, through its spool. After a failed write nothing more is
 * written and the commit fails. */
void savefile_write(savefile *f, const struct iovec *iov, int n_iov)
{
    for (int i = 0; i < n_iov; i++) host_spool_write(f->spool, iov[i].iov_base, iov[i].iov_len);
}

/* Finish the file: with `keep` (everything was captured), its mode, fsync and the rename;
 * else (or when anything fails) the temporary file is removed and the old file stays. The
 * failure of a write, the mode or the rename is reported here. */
ecs_status savefile_close(savefile *f, bool keep)
{
    ecs_status s = ECS_ERR_IO;
    struct stat old;
    mode_t mask = umask(0);
    umask(mask);
    bool exists = stat(f->target, &old) == 0;
    int err = host_spool_finish(f->spool);
    bool ok = keep && !err && fchmod(f->fd, exists ? old.st_mode & 07777 : 0666 & ~mask) == 0;
    if (ok && exists && geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0))
        ok =
            fchown(f->fd, old.st_uid, old.st_gid) == 0; /* root saves a user's file: still theirs */
    if (keep && !err && !ok) err = errno;
    if (ok && fsync(f->fd) != 0) ok = false, err = errno;
    if (close(f->fd) != 0 && ok) ok = false, err = errno;
    if (ok && rename(f->tmp, f->target) == 0)
        s = ECS_OK;
    else if (keep)
        host_error("scene",
                   "%s: could not write the scene: %s (the old file, if any, is "
                   "untouched)",
                   f->path, strerror(err ? err : errno));
    if (s != ECS_OK) unlink(f->tmp);
    free(f->tmp);
    *f = (savefile){.fd = -1};
    return s;
}

ecs_status host_scene_write_bytes(const char *path, const void *bytes, size_t size)
{
    savefile f;
    ecs_status s = savefile_open(&f, path, true);
    if (s != ECS_OK) return s;
    const char *p = bytes;
    int err = 0;
    while (size > 0 && !err) {
        ssize_t n = write(f.fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            err = n < 0 ? errno : EIO;
        else
            p += n, size -= (size_t)n;
    }
    if (err) host_error("snapshot", "%s: could not write it: %s", path, strerror(err));
    return savefile_close(&f, !err);
}
