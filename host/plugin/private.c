/* SPDX-License-Identifier: MIT */
/* private.c: the private folder of --watch, where plugin files are copied before dlopen
 * (private.h).
 *
 * Made with mkdtemp under $XDG_RUNTIME_DIR (else /tmp) as ecs-host-PID-XXXXXX, opened
 * once and used only through that descriptor (/proc/PID/fd/N/...), so a folder moved
 * away or a name planted in its place is never written through. Invariant: a copy is
 * made only while the descriptor's folder is this user's, mode 0700, still linked; a
 * folder removed (a tmp cleaner) is replaced by a new one made the same way; one opened
 * up (another owner, another mode) refuses every copy until it is closed again. Copies
 * are named by a counter of the whole session, so a path into a folder that is gone
 * never names a file of a later one. */
#include "private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

typedef enum folder_state { FOLDER_PRIVATE, FOLDER_REMOVED, FOLDER_OPENED } folder_state;

/* Is the folder open at fd private to this user: a folder, its owner, mode 0700, still
 * linked? FOLDER_REMOVED when it is all that but unlinked; else FOLDER_OPENED with the
 * reason in why. */
static folder_state state_of(int fd, char *why, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return host_format(why, len, "%s", strerror(errno)), FOLDER_OPENED;
    if (!S_ISDIR(st.st_mode)) return host_format(why, len, "not a folder"), FOLDER_OPENED;
    if (st.st_uid != geteuid())
        return host_format(why, len, "owned by uid %u, not by this user", (unsigned)st.st_uid),
               FOLDER_OPENED;
    if ((st.st_mode & 07777) != 0700)
        return host_format(why, len, "mode %04o, not 0700", (unsigned)(st.st_mode & 07777)),
               FOLDER_OPENED;
    if (st.st_nlink == 0) return host_format(why, len, "it was removed"), FOLDER_REMOVED;
    return FOLDER_PRIVATE;
}

/* Empty the folder open at fd (files and links are removed, never followed) and remove
 * it by name from the folder at base_fd, if the name still means that folder. */
static void remove_folder(int base_fd, const char *name, int fd, const char *shown)
{
    int it = dup(fd);
    DIR *d = it >= 0 ? fdopendir(it) : NULL;
    if (!d && it >= 0) close(it);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) unlinkat(fd, de->d_name, 0);
    if (d) closedir(d);
    struct stat a, b;
    if (fstat(fd, &a) != 0 || a.st_nlink == 0) return; /* removed already: nothing by name */
    if (fstatat(base_fd, name, &b, AT_SYMLINK_NOFOLLOW) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
        host_warn("reload", "%s was moved or replaced: not removed by name", shown);
        return;
    }
    if (unlinkat(base_fd, name, AT_REMOVEDIR) != 0)
        host_warn("reload", "could not remove %s: %s", shown, strerror(errno));
}

/* Remove the private folders of hosts that died without cleaning up (named by pid): only
 * real folders of this user, mode 0700 (never a symlink someone planted, never followed). */
static void sweep_stale(const char *base)
{
    DIR *d = opendir(base);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int pid = 0;
        char rest[64], path[PATH_MAX], why[200];
        if (sscanf(de->d_name, "ecs-host-%d-%63s", &pid, rest) != 2 || pid <= 0) continue;
        if (kill(pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        snprintf(path, sizeof path, "%s/%s", base, de->d_name);
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || state_of(fd, why, sizeof why) != FOLDER_PRIVATE) {
            host_detail("reload", "%s: left alone: %s", path, fd < 0 ? strerror(errno) : why);
            if (fd >= 0) close(fd);
            continue;
        }
        host_info("reload", "removing %s, left by a host that died (pid %d)", path, pid);
        remove_folder(dirfd(d), de->d_name, fd, path);
        close(fd);
    }
    if (d) closedir(d);
}

/* A new private folder under base into w (its name, descriptor and /proc path), the old
 * one's descriptor closed. False with the reason in why, hs unchanged. */
static bool make_folder(host_session *hs, const char *base, char *why, size_t len)
{
    char tmpl[PATH_MAX], at[64], reason[200] = "";
    snprintf(tmpl, sizeof tmpl, "%s/ecs-host-%d-XXXXXX", base, (int)getpid());
    int fd = -1;
    char *dir = NULL, *fd_path = NULL;
    bool made = mkdtemp(tmpl) != NULL;
    if (!made || (fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        state_of(fd, reason, sizeof reason) != FOLDER_PRIVATE || !(dir = strdup(tmpl)) ||
        (snprintf(at, sizeof at, "/proc/%d/fd/%d", (int)getpid(), fd), !(fd_path = strdup(at)))) {
        host_format(why, len, "cannot create the private plugin folder %s: %s", tmpl,
                    *reason ? reason : strerror(errno));
        if (fd >= 0)
            remove_folder(AT_FDCWD, tmpl, fd, tmpl), close(fd);
        else if (made)
            rmdir(tmpl); /* empty: made a moment ago */
        free(dir);
        return false;
    }
    if (hs->private_fd >= 0) close(hs->private_fd);
    free(hs->private_dir);
    free(hs->private_at);
    hs->private_dir = dir;
    hs->private_at = fd_path;
    hs->private_fd = fd;
    return true;
}

bool host_private_make(host_session *hs)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    base = base && *base ? base : "/tmp";
    sweep_stale(base);
    char why[PATH_MAX + 300];
    if (make_folder(hs, base, why, sizeof why)) return true;
    host_error("reload", "%s", why);
    return false;
}

bool host_private_ok(host_session *hs, char *why, size_t len)
{
    char reason[200];
    folder_state s = state_of(hs->private_fd, reason, sizeof reason);
    if (s == FOLDER_PRIVATE) return true;
    if (s == FOLDER_OPENED) {
        host_format(why, len, "the private folder %s is not private any more (%s)", hs->private_dir,
                    reason);
        return false;
    }
    char base[PATH_MAX], *old = strdup(hs->private_dir);
    snprintf(base, sizeof base, "%s", hs->private_dir);
    char *slash = strrchr(base, '/');
    if (slash) *slash = '\0'; /* its parent: where it was made */
    if (!old || !make_folder(hs, slash ? base : ".", why, len)) {
        if (!old) host_format(why, len, "out of memory");
        free(old);
        return false;
    }
    host_warn("reload", "the private folder %s was removed: private copies now in %s", old,
              hs->private_dir);
    free(old);
    return true;
}

void host_private_remove(host_session *hs)
{
    if (!hs->private_dir) return;
    if (hs->private_fd >= 0) {
        remove_folder(AT_FDCWD, hs->private_dir, hs->private_fd, hs->private_dir);
        close(hs->private_fd);
        hs->private_fd = -1;
    }
    free(hs->private_dir);
    free(hs->private_at);
    hs->private_dir = hs->private_at = NULL;
}
