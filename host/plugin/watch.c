/* SPDX-License-Identifier: MIT */
/* watch.c: inotify (or polling) over the plugin folder, with a quiet period (watch.h).
 *
 * One entry per *.so path ever seen: `reported` is its state when last reported (or at
 * the start), `seen` the latest state observed, `pending` whether a change awaits its
 * quiet period. Invariant: an entry is pending exactly while a change was noticed and not
 * yet settled, and `writing` while inotify saw it created or modified but not closed.
 * A file is reported once its quiet period passed, nobody writes it, it is not empty, and
 * (for a deletion) it stayed away for DELETE_GRACE_NS. What inotify cannot see is looked
 * at every poll period: the targets of symlinked plugins, the folder after it was deleted
 * or moved (rm -rf build; meson setup build: watched again once it is back), everything
 * after the event queue overflowed. A symlinked subfolder is watched at its target.
 */
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

typedef struct file_state {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_state;

typedef struct entry {
    char *file;
    file_state reported, seen;
    bool pending;
    bool writing; /* created or modified and not closed yet: a linker is at work */
    bool linked;  /* a symlink: inotify sees the link, not its target, so it is also polled */
    uint64_t first_change, last_change;
} entry;

#define WRITER_TIMEOUT_NS 60000000000ull /* a writer silent this long is taken as dead */
#define DELETE_GRACE_NS   2000000000ull  /* lld deletes the output when a link starts */

typedef struct subwatch {
    int wd;
    char *sub; /* "" for the folder itself */
} subwatch;

struct host_watch {
    char *dir;
    uint64_t quiet_ns, poll_ns, last_scan;
    int fd;        /* inotify, or -1 when polling */
    bool top_lost; /* inotify: the folder itself was deleted or moved; watched again when back */
    bool absent;   /* the folder was not there at the start: looked for, said when it comes */
    subwatch *subs;
    size_t sub_count;
    entry *entries;
    size_t count, cap;
    const char **out; /* what the last poll reported */
};

static bool same_state(const file_state *a, const file_state *b)
{
    if (a->exists != b->exists) return false;
    return !a->exists ||
           (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
            a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec);
}

/* The state of file (through a symlink: its target's), and in *linked whether the name
 * itself is a symlink (NULL: not asked). */
static file_state state_of(const host_watch *w, const char *file, bool *linked)
{
    char path[PATH_MAX];
    struct stat st;
    file_state s = {0};
    snprintf(path, sizeof path, "%s/%s", w->dir, file);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        s = (file_state){true, st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    if (linked) *linked = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    return s;
}

static entry *entry_for(host_watch *w, const char *file)
{
    for (size_t i = 0; i < w->count; i++)
        if (strcmp(w->entries[i].file, file) == 0) return &w->entries[i];
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        entry *v = realloc(w->entries, cap * sizeof *v);
        if (!v) return NULL;
        w->entries = v;
        w->cap = cap;
    }
    entry *e = &w->entries[w->count];
    memset(e, 0, sizeof *e);
    if (!(e->file = strdup(file))) return NULL;
    w->count++;
    return e;
}

/* A change to file was noticed at now. */
static entry *noticed(host_watch *w, const char *file, uint64_t now)
{
    entry *e = entry_for(w, file);
    if (!e) return NULL;
    if (!e->pending) e->first_change = now;
    e->pending = true;
    e->last_change = now;
    return e;
}

static bool is_plugin_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static bool is_subfolder_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && !(n > 2 && strcmp(name + n - 2, ".p") == 0);
}

/* Is rel (a folder entry) a folder, a symlink to one included? */
static bool is_folder(const host_watch *w, const char *rel, unsigned char d_type)
{
    if (d_type == DT_DIR) return true;
    if (d_type != DT_LNK && d_type != DT_UNKNOWN) return false;
    char path[PATH_MAX];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", w->dir, rel) >= sizeof path) return false;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Watch the folder (sub "") or a subfolder; a symlinked one is followed to its target. A
 * folder watched already (the same watch descriptor) is not added twice. False when it
 * cannot be watched (said, unless quiet). */
static bool add_inotify(host_watch *w, const char *sub, bool quiet)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", w->dir, *sub ? "/" : "", sub);
    uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
                    IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;
    int wd = inotify_add_watch(w->fd, path, mask);
    for (size_t i = 0; wd >= 0 && i < w->sub_count; i++) {
        if (w->subs[i].wd != wd) continue;
        char *copy = strdup(sub);
        if (copy) free(w->subs[i].sub), w->subs[i].sub = copy;
        return true;
    }
    subwatch *v = wd >= 0 ? realloc(w->subs, (w->sub_count + 1) * sizeof *v) : NULL;
    char *copy = v ? strdup(sub) : NULL;
    if (v) w->subs = v;
    if (!copy) {
        if (wd >= 0) inotify_rm_watch(w->fd, wd);
        if (!quiet)
            host_warn("watch", "%s: cannot watch it: %s", path,
                      wd < 0 ? strerror(errno) : "no memory");
        return false;
    }
    w->subs[w->sub_count++] = (subwatch){wd, copy};
    return true;
}

/* The watch of wd is gone (its folder deleted or moved): forget it. */
static void drop_inotify(host_watch *w, int wd)
{
    for (size_t i = 0; i < w->sub_count; i++) {
        if (w->subs[i].wd != wd) continue;
        if (!*w->subs[i].sub) w->top_lost = true;
        free(w->subs[i].sub);
        w->subs[i] = w->subs[--w->sub_count];
        return;
    }
}

/* List the *.so files (and, with inotify, watch the subfolders) like the loader does.
 * record: note each file's state as seen at `now` (polling); else just create entries. */
static void scan(host_watch *w, const char *sub, bool record, uint64_t now)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", w->dir, *sub ? "/" : "", sub);
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", de->d_name);
        if (!*sub && is_subfolder_name(de->d_name) && is_folder(w, rel, de->d_type)) {
            if (w->fd >= 0) add_inotify(w, rel, false); /* once: the same folder is one watch */
            scan(w, rel, record, now);
        } else if (is_plugin_name(de->d_name)) {
            entry *e = entry_for(w, rel);
            file_state s = e ? state_of(w, rel, &e->linked) : (file_state){0};
            if (e && !record)
                e->reported = e->seen = s;
            else if (e && !same_state(&s, &e->seen)) {
                e->seen = s;
                noticed(w, rel, now);
            }
        }
    }
    if (d) closedir(d);
}

host_watch *host_watch_new(const char *dir, bool force_poll, uint64_t quiet_ns, uint64_t poll_ns)
{
    host_watch *w = calloc(1, sizeof *w);
    if (!w || !(w->dir = strdup(dir))) {
        free(w);
        return NULL;
    }
    w->quiet_ns = quiet_ns;
    w->poll_ns = poll_ns;
    w->fd = force_poll ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (!force_poll && w->fd < 0)
        host_warn("watch", "inotify unavailable (%s): polling %s instead", strerror(errno), dir);
    struct stat st;
    w->absent = stat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
    w->top_lost = w->fd >= 0 && (w->absent || !add_inotify(w, "", false));
    scan(w, "", false, 0);
    return w;
}

void host_watch_free(host_watch *w)
{
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    for (size_t i = 0; i < w->sub_count; i++) free(w->subs[i].sub);
    for (size_t i = 0; i < w->count; i++) free(w->entries[i].file);
    free(w->subs);
    free(w->entries);
    free(w->out);
    free(w->dir);
    free(w);
}

bool host_watch_inotify(const host_watch *w)
{
    return w->fd >= 0;
}

bool host_watch_absent(const host_watch *w)
{
    return w->absent;
}

static const char *sub_of(const host_watch *w, int wd)
{
    for (size_t i = 0; i < w->sub_count; i++)
        if (w->subs[i].wd == wd) return w->subs[i].sub;
    return NULL;
}

/* Drain the inotify queue. */
static void read_events(host_watch *w, uint64_t now)
{
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(w->fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) { /* events were lost: look at everything */
                host_detail("watch",
                            "%s: events were lost (inotify's queue overflowed): looking at every "
                            "file again",
                            w->dir);
                w->last_scan = 0;
                continue;
            }
            if (ev->mask & IN_MOVE_SELF) { /* it now stands elsewhere: look again by name */
                inotify_rm_watch(w->fd, ev->wd);
                drop_inotify(w, ev->wd);
                w->last_scan = 0;
                continue;
            }
            if (ev->mask & IN_IGNORED) { /* its folder is gone */
                drop_inotify(w, ev->wd);
                continue;
            }
            const char *sub = sub_of(w, ev->wd);
            if (!sub || !ev->len) continue;
            char rel[PATH_MAX];
            snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", ev->name);
            if (!*sub && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && is_subfolder_name(ev->name) &&
                is_folder(w, rel, (ev->mask & IN_ISDIR) ? DT_DIR : DT_UNKNOWN)) {
                add_inotify(w, rel, false); /* a new subfolder (or link to one): watch it */
                scan(w, rel, true, now);
            } else if (!(ev->mask & IN_ISDIR) && is_plugin_name(ev->name)) {
                entry *e = noticed(w, rel, now);
                bool link = false;
                if (e && (ev->mask & (IN_CREATE | IN_MOVED_TO))) state_of(w, rel, &link);
                if (e && (ev->mask & (IN_CREATE | IN_MOVED_TO))) e->linked = link;
                if (e && (ev->mask & (IN_CREATE | IN_MODIFY)) && !link)
                    e->writing = true; /* a new symlink is complete: nobody writes it */
                if (e && (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)))
                    e->writing = false; /* closed, replaced or gone: nobody writes it now */
            }
        }
    }
}

/* Look again at what inotify cannot see: with polling, everything; with inotify, the
 * targets of symlinked plugins, and (after an overflow, or when the folder comes back
 * after it was deleted) everything, watching the folder and its subfolders again. */
static void look_again(host_watch *w, uint64_t now)
{
    bool all = w->fd < 0 || w->last_scan == 0 || w->top_lost;
    struct stat st;
    if (w->top_lost) {
        if (!add_inotify(w, "", true)) return; /* not (back) there yet */
        w->top_lost = false;
        host_info("watch", "%s: %s", w->dir,
                  w->absent ? "there now: watching it" : "watching it again");
        w->absent = false;
    } else if (w->absent && stat(w->dir, &st) == 0) { /* polled */
        host_info("watch", "%s: there now", w->dir);
        w->absent = false;
    }
    if (all) scan(w, "", true, now);
    for (size_t i = 0; i < w->count; i++) { /* deleted files do not show in a scan */
        entry *e = &w->entries[i];
        if (!all && !e->linked) continue;
        file_state s = state_of(w, e->file, &e->linked);
        if (!same_state(&s, &e->seen)) e->seen = s, noticed(w, e->file, now);
    }
    w->last_scan = now;
}

bool host_watch_busy(const host_watch *w)
{
    for (size_t i = 0; i < w->count; i++)
        if (w->entries[i].pending) return true;
    return false;
}

const char *const *host_watch_poll(host_watch *w, uint64_t now_ns, uint64_t *changed_at)
{
    if (w->fd >= 0) read_events(w, now_ns);
    if (now_ns - w->last_scan >= w->poll_ns || w->last_scan == 0) look_again(w, now_ns);
    free(w->out);
    w->out = calloc(w->count + 1, sizeof *w->out);
    size_t k = 0;
    uint64_t first = now_ns;
    for (size_t i = 0; w->out && i < w->count; i++) {
        entry *e = &w->entries[i];
        /* what is polled must also have stood still for a whole poll period */
        uint64_t quiet = w->quiet_ns + (w->fd < 0 || e->linked ? w->poll_ns : 0);
        if (!e->pending || now_ns - e->last_change < quiet) continue;
        if (e->writing && now_ns - e->last_change < WRITER_TIMEOUT_NS) continue;
        file_state s = state_of(w, e->file, NULL);
        if (!s.exists && e->reported.exists && now_ns - e->last_change < DELETE_GRACE_NS)
            continue; /* gone for now: a link may be about to put it back */
        if (s.exists && s.size == 0 && now_ns - e->last_change < WRITER_TIMEOUT_NS)
            continue; /* an empty file is never a finished build (what polling can see) */
        e->pending = false;
        e->writing = false;
        e->seen = s;
        if (same_state(&s, &e->reported)) { /* e.g. a failed link of a new file */
            host_info("watch", "%s changed and settled as it was: nothing to do", e->file);
            continue;
        }
        e->reported = s;
        if (e->first_change < first) first = e->first_change;
        w->out[k++] = e->file;
    }
    if (changed_at) *changed_at = first;
    static const char *const none[] = {NULL};
    return w->out ? w->out : none;
}
