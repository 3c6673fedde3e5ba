/* watch.c: inotify (or polling) over the plugin folder, with a quiet period (watch.h).
 *
 * One entry per *.so path ever seen: `reported` is its state when last reported (or at
 * the start), `seen` the latest state observed, `pending` whether a change awaits its
 * quiet period. Invariant: an entry is pending exactly while a change was noticed and not
 * yet settled, and `writing` while inotify saw it created or modified but not closed.
 * A file is reported once its quiet period passed, nobody writes it, it is not empty, and
 * (for a deletion) it stayed away for DELETE_GRACE_NS.
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
    int fd; /* inotify, or -1 when polling */
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

static file_state state_of(const host_watch *w, const char *file)
{
    char path[PATH_MAX];
    struct stat st;
    file_state s = {0};
    snprintf(path, sizeof path, "%s/%s", w->dir, file);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        s = (file_state){true, st.st_dev, st.st_ino, st.st_size, st.st_mtim};
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

static void add_inotify(host_watch *w, const char *sub)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", w->dir, *sub ? "/" : "", sub);
    uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
                    IN_MODIFY | IN_ATTRIB | (*sub ? IN_DELETE_SELF : 0u);
    int wd = inotify_add_watch(w->fd, path, mask);
    subwatch *v = wd >= 0 ? realloc(w->subs, (w->sub_count + 1) * sizeof *v) : NULL;
    char *copy = v ? strdup(sub) : NULL;
    if (v) w->subs = v;
    if (!copy) {
        if (wd >= 0) inotify_rm_watch(w->fd, wd);
        host_warn("watch", "%s: cannot watch it: %s", path, wd < 0 ? strerror(errno) : "no memory");
        return;
    }
    w->subs[w->sub_count++] = (subwatch){wd, copy};
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
        if (!*sub && de->d_type == DT_DIR && is_subfolder_name(de->d_name)) {
            if (w->fd >= 0 && !record) add_inotify(w, rel);
            scan(w, rel, record, now);
        } else if (is_plugin_name(de->d_name)) {
            entry *e = entry_for(w, rel);
            file_state s = e ? state_of(w, rel) : (file_state){0};
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
    if (w->fd >= 0) add_inotify(w, "");
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
            const char *sub = sub_of(w, ev->wd);
            if (!sub || !ev->len) continue;
            char rel[PATH_MAX];
            snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", ev->name);
            if ((ev->mask & IN_ISDIR) && !*sub && (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
                is_subfolder_name(ev->name)) {
                add_inotify(w, rel); /* a new subfolder: watch it, and what it holds */
                scan(w, rel, true, now);
            } else if (!(ev->mask & IN_ISDIR) && is_plugin_name(ev->name)) {
                entry *e = noticed(w, rel, now);
                if (e && (ev->mask & (IN_CREATE | IN_MODIFY))) e->writing = true;
                if (e && (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)))
                    e->writing = false; /* closed, replaced or gone: nobody writes it now */
            }
        }
    }
}

const char *const *host_watch_poll(host_watch *w, uint64_t now_ns, uint64_t *changed_at)
{
    if (w->fd >= 0)
        read_events(w, now_ns);
    else if (now_ns - w->last_scan >= w->poll_ns) {
        scan(w, "", true, now_ns);
        for (size_t i = 0; i < w->count; i++) { /* deleted files do not show in a scan */
            entry *e = &w->entries[i];
            file_state s = state_of(w, e->file);
            if (!same_state(&s, &e->seen)) e->seen = s, noticed(w, e->file, now_ns);
        }
        w->last_scan = now_ns;
    }
    free(w->out);
    w->out = calloc(w->count + 1, sizeof *w->out);
    size_t k = 0;
    uint64_t first = now_ns;
    for (size_t i = 0; w->out && i < w->count; i++) {
        entry *e = &w->entries[i];
        if (!e->pending || now_ns - e->last_change < w->quiet_ns) continue;
        if (e->writing && now_ns - e->last_change < WRITER_TIMEOUT_NS) continue;
        file_state s = state_of(w, e->file);
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
