/* SPDX-License-Identifier: MIT */
/* perm.c: who may write a plugin file and the folders on its way (perm.h), as OpenSSH's
 * StrictModes decides: the loader checks every file at start, the reloader every file that
 * appears or changes. */
#include "perm.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* Like ssh's StrictModes: may users other than the owner (or root) write path? When so
 * and `allow`, warn and return false; when so and not allowed, write the reason (with the
 * fix) into why and return true. */
/* Is gid the private group of user uid: its only member, by primary group and by the
 * group's member list (as Debian's OpenSSH decides for group-writable files)? A user
 * private group is what umask 002, Debian's default for users, makes every build
 * group-writable for. The last answer is cached: a folder's files share owner and group. */
static bool private_group_of(gid_t gid, uid_t uid)
{
    static struct {
        bool valid, answer;
        gid_t gid;
        uid_t uid;
    } last;
    if (last.valid && last.gid == gid && last.uid == uid) return last.answer;
    bool ok = false;
    const struct group *gr = getgrgid(gid);
    char owner[256] = "";
    const struct passwd *pw = getpwuid(uid);
    if (gr && pw && strlen(pw->pw_name) < sizeof owner) {
        snprintf(owner, sizeof owner, "%s", pw->pw_name);
        bool others = false, member = pw->pw_gid == gid;
        for (char **m = gr->gr_mem; *m; m++) {
            if (strcmp(*m, owner) == 0)
                member = true;
            else
                others = true;
        }
        setpwent();
        for (const struct passwd *p; !others && (p = getpwent());)
            if (p->pw_gid == gid && p->pw_uid != uid) others = true;
        endpwent();
        ok = member && !others;
    }
    last.valid = true, last.gid = gid, last.uid = uid, last.answer = ok;
    return ok;
}

/* What is wrong with who may write st, or NULL: its owner is neither this user nor root,
 * others may write it, or its group may and has other members than its owner. For a
 * folder above a plugin folder (sticky_ok), a sticky one that others may write is fine:
 * only an entry's owner may rename or remove it (/tmp). */
static const char *write_problem(const struct stat *st, bool sticky_ok)
{
    bool others_write = (st->st_mode & S_IWOTH) != 0 ||
                        ((st->st_mode & S_IWGRP) && !private_group_of(st->st_gid, st->st_uid));
    if (sticky_ok && (st->st_mode & S_ISVTX)) others_write = false;
    bool foreign = st->st_uid != geteuid() && st->st_uid != 0;
    return others_write && (st->st_mode & S_IWOTH) ? "is writable by others"
           : others_write ? "is writable by its group, which has other members than its owner"
           : foreign      ? "is owned by another user"
                          : NULL;
}

bool host_plugin_insecure(const char *what, const char *path, bool allow, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0) return false; /* reported when it is opened */
    const char *problem = write_problem(&st, false);
    if (!problem) return false;
    bool foreign = st.st_uid != geteuid() && st.st_uid != 0;
    unsigned mode = (unsigned)(st.st_mode & 07777);
    if (allow) {
        host_warn("loader", "%s %s %s (mode %04o): loading it anyway (--allow-insecure-plugins)",
                  what, path, problem, mode);
        return false;
    }
    snprintf(why, len,
             "%s (mode %04o): refusing it; fix with 'chmod go-w %s'%s, or pass "
             "--allow-insecure-plugins",
             problem, mode, path, foreign ? " and 'chown'" : "");
    return true;
}

/* The folder `parent`, above `what` `folder` (a prefix of its path): false when only this
 * user or root may move what is inside; else true with the reason and the fix in why
 * (with allow: a warning, false). */
static bool parent_insecure(const char *what, const char *folder, const char *parent, bool allow,
                            char *why, size_t len)
{
    struct stat st;
    const char *problem = stat(parent, &st) == 0 ? write_problem(&st, true) : NULL;
    if (!problem) return false;
    unsigned mode = (unsigned)(st.st_mode & 07777);
    if (allow) {
        host_warn("loader",
                  "%s %s is inside %s, which %s (mode %04o): loading it anyway "
                  "(--allow-insecure-plugins)",
                  what, folder, parent, problem, mode);
        return false;
    }
    bool owner = strstr(problem, "owned") != NULL;
    snprintf(why, len,
             "is inside %s, which %s (mode %04o%s): another user could move it away and put "
             "theirs in its place; refusing it; fix with '%s %s'%s%s%s, or pass "
             "--allow-insecure-plugins",
             parent, problem, mode, owner ? "" : ", not sticky",
             owner ? "chown $USER" : "chmod o-w", parent, owner ? "" : " or 'chmod +t ",
             owner ? "" : parent, owner ? "" : "'");
    return true;
}

/* parent_insecure for every folder a component of the absolute path `abs` stands in: "/",
 * "/a", "/a/b" for "/a/b/c" (each as stat() finds it, symlinks followed, so the folder
 * that really holds the next component is the one looked at). */
static bool parents_insecure(const char *what, const char *folder, const char *abs, bool allow,
                             char *why, size_t len)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", abs);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '/' || (i > 0 && p[i - 1] == '/')) continue;
        size_t end = i ? i : 1; /* "/" itself, then each prefix */
        char c = p[end];
        p[end] = '\0';
        bool bad = parent_insecure(what, folder, p, allow, why, len);
        p[end] = c;
        if (bad) return true;
    }
    return false;
}

bool host_folder_insecure(const char *what, const char *folder, bool allow, char *why, size_t len)
{
    if (host_plugin_insecure(what, folder, allow, why, len)) return true;
    char abs[PATH_MAX], real[PATH_MAX], cwd[PATH_MAX];
    if (folder[0] == '/')
        snprintf(abs, sizeof abs, "%s", folder);
    else if (getcwd(cwd, sizeof cwd))
        host_format(abs, sizeof abs, "%s/%s", cwd, folder);
    else
        return false; /* reported when it is opened */
    if (parents_insecure(what, folder, abs, allow, why, len)) return true;
    /* through symlinks: the folders that really hold it too */
    return realpath(folder, real) && strcmp(real, abs) != 0 &&
           parents_insecure(what, folder, real, allow, why, len);
}

/* A folder on the way to a plugin file: false, or true with "its folder F: why". */
static bool folder_insecure(const char *what, const char *folder, bool allow, char *why, size_t len)
{
    char folder_why[512]; /* as host_plugin.reason */
    if (!host_folder_insecure("plugin folder", folder, allow, folder_why, sizeof folder_why))
        return false;
    host_format(why, len, "%s %s %s", what, folder, folder_why);
    return true;
}

bool host_plugin_path_insecure(const char *dir, const char *file, bool check_dir, bool allow,
                               char *why, size_t len)
{
    char path[PATH_MAX], here[PATH_MAX], target[PATH_MAX], real_here[PATH_MAX];
    *why = '\0';
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(here, sizeof here, "%s/%.*s", dir, (int)(slash - file), file);
    else
        snprintf(here, sizeof here, "%s", dir);
    if (check_dir && folder_insecure("its folder", dir, allow, why, len)) return true;
    if (slash && folder_insecure("its folder", here, allow, why, len)) return true;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (host_plugin_insecure("plugin file", path, allow, why, len)) return true;
    /* a symlink (or a file in a symlinked subfolder): the folder that really holds it */
    char *end;
    if (!realpath(path, target) || !(end = strrchr(target, '/'))) return false;
    *end = '\0';
    if (realpath(here, real_here) && strcmp(real_here, target) == 0) return false; /* no link */
    return folder_insecure("its target's folder", *target ? target : "/", allow, why, len);
}
