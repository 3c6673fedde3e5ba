/* loader.c: finding, checking, ordering, loading and unloading plugins (world.h).
 *
 * Loading a folder: list every *.so in it and one level of subfolders (sorted by relative
 * path) -> refuse files others may write -> open each (plugin_file.h: a regular file, opened
 * without blocking, whose ELF headers and segments lie inside it; dlopen RTLD_NOW |
 * RTLD_LOCAL, entry symbol, ABI and struct sizes) -> apply manifest.json (rank, config,
 * disabled) -> order (dependencies, rank, file) -> load each. A bad plugin is logged with
 * its file and reason and skipped; the others go on.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_file.h"
#include "guard.h"
#include "json.h"
#include "log.h"
#include "order.h"
#include "reload.h"
#include "scene.h"
#include "world.h"

#define MANIFEST_NAME       "manifest.json"
#define PLUGIN_DESC_V1_SIZE (offsetof(ecs_plugin_desc, unload) + sizeof(void *))

/* ---- plugin records ---- */

static void call_dlclose(void *dl)
{
    dlclose(dl);
}

void host_plugin_release(host_plugin *p)
{
    if (p->dl) host_guard_run(call_dlclose, p->dl);
    p->dl = NULL;
    p->desc = NULL;
    if (p->copy_path) unlink(p->copy_path);
    free(p->copy_path);
    p->copy_path = NULL;
}

/* Mark p skipped as bad: one log line naming the file and the reason. */
static void skip(host_world *w, host_plugin *p, const char *fmt, ...) ECS_PRINTF(3, 4);
static void skip(host_world *w, host_plugin *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reason, sizeof p->reason, fmt, ap);
    va_end(ap);
    p->status = HOST_PLUGIN_SKIPPED;
    w->bad_plugins++;
    if (!w->quiet_skips) host_error("loader", "%s: skipped: %s", p->path, p->reason);
    host_plugin_release(p);
}

static char **copy_list(const char *const *list)
{
    size_t n = 0;
    while (list && list[n]) n++;
    char **out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        if (!(out[i] = strdup(list[i]))) {
            for (size_t j = 0; j < i; j++) free(out[j]);
            free(out);
            return NULL;
        }
    }
    return out;
}

void host_plugin_free(host_plugin *p)
{
    if (!p) return;
    host_reload_forget_previous(p);
    if (p->dl) dlclose(p->dl);
    if (p->copy_path) unlink(p->copy_path);
    free(p->copy_path);
    for (char **d = p->deps; d && *d; d++) free(*d);
    for (size_t i = 0; i < p->api_count; i++) free(p->api_names[i]);
    free(p->api_names);
    free(p->collections);
    free(p->pending_entities);
    for (size_t i = 0; i < p->use_count; i++) free(p->uses[i].name);
    free(p->uses);
    free(p->deps);
    free(p->name);
    free(p->version);
    free(p->path);
    free(p->file);
    cJSON_Delete(p->config);
    free(p);
}

static bool valid_plugin_name(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
    return n > 0 && n < 64 && s[n] == '\0';
}

bool host_plugin_desc_ok(const ecs_plugin_desc *d, char *why, size_t len)
{
    if (!d)
        snprintf(why, len, "%s() returned NULL", ECS_PLUGIN_ENTRY_NAME);
    else if (d->struct_size < PLUGIN_DESC_V1_SIZE)
        snprintf(why, len,
                 "ecs_plugin_desc.struct_size is %u, at least %zu expected: the "
                 "plugin was not built against this SDK",
                 d->struct_size, PLUGIN_DESC_V1_SIZE);
    else if (d->abi_major != ECS_ABI_MAJOR)
        snprintf(why, len,
                 "built for ABI %u.%u, this host speaks %u.%u: rebuild the plugin "
                 "against this SDK",
                 d->abi_major, d->abi_minor, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    else if (d->abi_minor > ECS_ABI_MINOR)
        snprintf(why, len, "built for ABI %u.%u, newer than this host's %u.%u: update the host",
                 d->abi_major, d->abi_minor, ECS_ABI_MAJOR, ECS_ABI_MINOR);
    else if (!d->name || !valid_plugin_name(d->name))
        snprintf(why, len, "its name must be 1-63 characters of [a-z0-9_]");
    else if (!d->load)
        snprintf(why, len, "its description has no load() function");
    else
        return true;
    return false;
}

/* A record for the plugin file at path, not opened yet. NULL: out of memory. */
static host_plugin *new_record(host_world *w, const char *path, const char *file)
{
    host_plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || !(p->file = strdup(file))) {
        if (p) free(p->path);
        free(p);
        return NULL;
    }
    p->world = w;
    p->rank = INT_MAX;
    p->listed_at = -1;
    return p;
}

/* Copy path into the private folder under a unique name; the copy's path, or NULL with
 * the reason in why. dlopen() caches by path, and a build tool must be free to overwrite
 * the original: so the host never maps the build output itself. */
static char *private_copy(host_world *w, const char *path, const char *file, char *why, size_t len)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char name[NAME_MAX + 16], dst[PATH_MAX];
    snprintf(name, sizeof name, "%u-%s", ++w->copies, base);
    snprintf(dst, sizeof dst, "%s/%s", w->private_at, name); /* by the descriptor */
    if (!host_reload_private_ok(w, why, len)) return NULL;
    int in = host_open_regular(path, why, len); /* never blocks on a FIFO */
    if (in < 0) return NULL;
    int out =
        openat(w->private_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
    bool ok = out >= 0;
    char buf[65536];
    ssize_t n = 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    ok = ok && n == 0;
    if (out >= 0 && close(out) != 0) ok = false;
    if (!ok) host_format(why, len, "cannot copy it to %s: %s", dst, strerror(errno));
    if (in >= 0) close(in);
    if (!ok && out >= 0) unlink(dst);
    return ok ? strdup(dst) : NULL;
}

/* dlopen and the entry call, each run under the crash guard with --safe. */
typedef struct open_call {
    const char *path;
    void *dl;
    union {
        void *obj;
        ecs_plugin_entry_fn fn;
    } entry;
    const ecs_plugin_desc *desc;
} open_call;

static void call_dlopen(void *arg)
{
    open_call *c = arg;
    c->dl = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
}

static void call_entry(void *arg)
{
    open_call *c = arg;
    c->desc = c->entry.fn();
}

/* Open path and read its description. The record is returned even when the plugin is
 * bad (status SKIPPED, with the reason), so --list can show it. NULL: out of memory. */
host_plugin *host_plugin_open(host_world *w, const char *path, const char *file)
{
    host_plugin *p = new_record(w, path, file);
    if (!p) return NULL;
    char why[400];
    if (!host_elf_check_path(path, why, sizeof why)) { /* before anything maps it */
        skip(w, p, "%s", why);
        return p;
    }
    if (w->private_dir && !(p->copy_path = private_copy(w, path, file, why, sizeof why))) {
        skip(w, p, "%s", why);
        return p;
    }
    const char *map = p->copy_path ? p->copy_path : path;
    if (p->copy_path && !host_elf_check_path(map, why, sizeof why)) { /* the bytes mapped */
        skip(w, p, "%s", why);
        return p;
    }
    if (!host_probe_file(&w->probe, map, NULL, why, sizeof why)) { /* before it is mapped */
        skip(w, p, "%s", why);
        return p;
    }
    open_call oc = {map, NULL, {NULL}, NULL};
    int sig = host_guard_run(call_dlopen, &oc); /* --safe: what the probe could not see */
    if (sig) {
        skip(w, p,
             "its constructor crashed with %s in the host (the probe had passed): it stays "
             "mapped, as dlopen left it",
             host_guard_signal_name(sig));
        return p;
    }
    if (!(p->dl = oc.dl)) {
        skip(w, p, "dlopen failed: %s", dlerror());
        return p;
    }
    oc.entry.obj = dlsym(p->dl, ECS_PLUGIN_ENTRY_NAME);
    if (!oc.entry.obj) {
        skip(w, p, "no entry symbol '%s': declare it with ECS_PLUGIN_EXPORT()",
             ECS_PLUGIN_ENTRY_NAME);
        return p;
    }
    if ((sig = host_guard_run(call_entry, &oc))) {
        p->dl = NULL; /* its code may hold a lock or a half-made state: never closed */
        skip(w, p, "its entry function %s() crashed with %s in the host (the probe had passed)",
             ECS_PLUGIN_ENTRY_NAME, host_guard_signal_name(sig));
        return p;
    }
    const ecs_plugin_desc *d = oc.desc;
    if (!host_plugin_desc_ok(d, why, sizeof why)) {
        skip(w, p, "%s", why);
        return p;
    }
    p->desc = d;
    p->abi_major = d->abi_major;
    p->abi_minor = d->abi_minor;
    p->state_version = d->state_version;
    p->name = strdup(d->name);
    p->version = strdup(d->version ? d->version : "");
    p->deps = copy_list(d->dependencies);
    if (!p->name || !p->version || !p->deps) skip(w, p, "out of memory");
    return p;
}

/* ---- finding plugin files ---- */

typedef struct path_list {
    char **v;
    size_t n, cap;
} path_list;

static int push_path(path_list *l, const char *path)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(path))) return -1;
    l->n++;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Add every *.so of dir/sub (sub "" for dir itself), recursing one level from the top. */
/* List every *.so of dir/sub into out (and, at the top, of each subfolder but meson's
 * object folders). Whatever is named like a plugin is listed, a FIFO or a dangling symlink
 * too, so the loader refuses it with its reason rather than passing over it in silence; a
 * subfolder that cannot be read is logged and counted as bad. -1 when dir itself cannot
 * be listed. */
static int scan(host_world *w, const char *dir, const char *sub, path_list *out)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", dir, *sub ? "/" : "", sub);
    DIR *d = opendir(path);
    if (!d && *sub) { /* an unreadable subfolder is not fatal, but it is said */
        host_error("loader", "%s: skipped: cannot list this subfolder: %s", path, strerror(errno));
        w->bad_plugins++;
        return 0;
    }
    if (!d) return -1;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char rel[PATH_MAX], full[PATH_MAX];
        int a = snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", de->d_name);
        int b = snprintf(full, sizeof full, "%s/%s", dir, rel);
        struct stat st;
        if (a < 0 || b < 0 || (size_t)a >= sizeof rel || (size_t)b >= sizeof full) continue;
        bool is_dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir && !*sub && !ends_with(de->d_name, ".p"))
            rc = scan(w, dir, rel, out); /* meson's object folders end in .p */
        else if (!is_dir && ends_with(de->d_name, ".so"))
            rc = push_path(out, rel);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

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

bool host_plugin_insecure(const char *what, const char *path, bool allow, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0) return false; /* reported when it is opened */
    bool others_write = (st.st_mode & S_IWOTH) != 0 ||
                        ((st.st_mode & S_IWGRP) && !private_group_of(st.st_gid, st.st_uid));
    bool foreign = st.st_uid != geteuid() && st.st_uid != 0;
    if (!others_write && !foreign) return false;
    const char *problem = !others_write            ? "is owned by another user"
                          : (st.st_mode & S_IWOTH) ? "is writable by others"
                                                   : "is writable by its group, which has "
                                                     "other members than its owner";
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

/* A folder on the way to a plugin file: false, or true with "its folder F: why". */
static bool folder_insecure(const char *what, const char *folder, bool allow, char *why, size_t len)
{
    char folder_why[sizeof((host_plugin *)0)->reason];
    if (!host_plugin_insecure("plugin folder", folder, allow, folder_why, sizeof folder_why))
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

/* ---- manifest ---- */

/* The plugin of folder `folder` (any: -1) named name, or NULL. */
static host_plugin *plugin_named(host_world *w, const char *name, int folder)
{
    for (size_t i = 0; i < w->plugin_count; i++)
        if (w->plugins[i]->name && strcmp(w->plugins[i]->name, name) == 0 &&
            (folder < 0 || w->plugins[i]->folder == folder))
            return w->plugins[i];
    return NULL;
}

/* Apply dir/manifest.json when it exists: plugins[i] = {name, config?, disabled?}. */
static ecs_status apply_manifest(host_world *w, const char *dir, int folder, bool allow_insecure)
{
    char path[PATH_MAX], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, MANIFEST_NAME);
    if (access(path, F_OK) != 0) return ECS_OK;
    if (host_plugin_insecure("manifest", path, allow_insecure, err,
                             sizeof err)) { /* it decides what loads */
        host_error("manifest", "%s %s", path, err);
        return ECS_ERR_INVALID_ARGUMENT;
    }
    cJSON *root = host_json_read_file(path, err, sizeof err);
    if (!root) {
        host_error("manifest", "%s", err);
        return ECS_ERR_BAD_VALUE;
    }
    ecs_status s = ECS_OK;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "plugins");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(list)) {
        host_error("manifest", "%s: expected an object with an array \"plugins\"", path);
        s = ECS_ERR_BAD_VALUE;
    }
    int i = 0;
    const cJSON *item, *entries = s == ECS_OK ? list : NULL;
    cJSON_ArrayForEach(item, entries)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
        const cJSON *off = cJSON_GetObjectItemCaseSensitive(item, "disabled");
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(item, "config");
        const char *field = NULL, *expected = NULL;
        if (!cJSON_IsObject(item))
            field = "", expected = "an object {\"name\": ...}";
        else if (!cJSON_IsString(name))
            field = ".name", expected = "a string";
        else if (off && !cJSON_IsBool(off))
            field = ".disabled", expected = "true or false";
        if (field) {
            host_error("manifest", "%s: plugins[%d]%s: expected %s, found %s", path, i, field,
                       expected,
                       host_json_type_name(*field ? (field[1] == 'n' ? name : off) : item));
            s = ECS_ERR_BAD_VALUE;
            break;
        }
        host_plugin *p = plugin_named(w, name->valuestring, folder);
        if (p && p->listed_at >= 0) {
            host_error("manifest", "%s: plugins[%d]: '%s' is already listed at plugins[%d]", path,
                       i, name->valuestring, p->listed_at);
            s = ECS_ERR_BAD_VALUE;
            break;
        }
        if (!p)
            host_warn("manifest", "%s: plugins[%d]: no plugin named '%s' in %s", path, i,
                      name->valuestring, dir);
        else {
            p->rank = folder * HOST_FOLDER_RANKS + i;
            p->listed_at = i;
            if (cJSON_IsTrue(off) && p->status == HOST_PLUGIN_FOUND) {
                p->status = HOST_PLUGIN_DISABLED;
                snprintf(p->reason, sizeof p->reason, "disabled by %s", MANIFEST_NAME);
            }
            if (cfg && !(p->config = cJSON_Duplicate(cfg, 1))) s = ECS_ERR_NO_MEMORY;
        }
        i++;
    }
    cJSON_Delete(root);
    return s;
}

/* ---- loading ---- */

/* The entities a refused load() created: destroyed, and the managers told. */
static void destroy_pending_entities(host_plugin *p)
{
    uint32_t gone = 0;
    if (p->pending_entity_count)
        host_entity_destroy_many(p->world->entities, p->pending_entities,
                                 (uint32_t)p->pending_entity_count, &gone);
    if (gone) {
        host_detail("loader", "%s: destroyed the %u entities its refused load() created",
                    p->name ? p->name : p->file, gone);
        host_world_announce_destroyed(p->world);
    }
    free(p->pending_entities);
    p->pending_entities = NULL;
    p->pending_entity_count = p->pending_entity_cap = 0;
}

void host_plugin_discard_pending(host_plugin *p)
{
    destroy_pending_entities(p);
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        free(p->pending_managers[i]->name);
        free(p->pending_managers[i]);
    }
    for (size_t i = 0; i < p->pending_api_count; i++) {
        free(p->pending_apis[i].name);
        free(p->pending_apis[i].bytes);
    }
    for (size_t i = 0; i < p->pending_system_count; i++) host_system_free(p->pending_systems[i]);
    free(p->pending_managers);
    free(p->pending_apis);
    free(p->pending_systems);
    free(p->pending_collections); /* no reference was taken yet */
    p->pending_managers = NULL;
    p->pending_apis = NULL;
    p->pending_systems = NULL;
    p->pending_collections = NULL;
    p->pending_manager_count = p->pending_api_count = 0;
    p->pending_system_count = p->pending_collection_count = 0;
}

void host_plugin_call_unload(host_plugin *p, const ecs_plugin_desc *desc, void *state,
                             ecs_unload_reason why)
{
    if (!desc || !desc->unload) return;
    bool was = p->in_unload;
    p->in_unload = true;
    desc->unload(&p->table, state, why);
    p->in_unload = was;
}

/* Room in w for p's pending managers and systems, and their steps. ECS_ERR_NO_MEMORY
 * changes nothing the frame reads. */
ecs_status host_world_reserve_for(host_world *w, const host_plugin *p)
{
    size_t need = w->manager_count + p->pending_manager_count;
    if (need > w->manager_cap) {
        host_manager **v = realloc(w->managers, need * 2 * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        w->managers = v;
        w->manager_cap = need * 2;
    }
    size_t systems = w->system_count + p->pending_system_count;
    if (systems > w->system_cap) {
        host_system **v = realloc(w->systems, systems * 2 * sizeof *v);
        if (!v) return ECS_ERR_NO_MEMORY;
        w->systems = v;
        w->system_cap = systems * 2;
    }
    return host_schedule_reserve(w, need + systems);
}

/* Take p's pending collection references (they become its own). */
static void commit_collections(host_world *w, host_plugin *p)
{
    for (size_t i = 0; i < p->pending_collection_count; i++)
        host_collections_ref(&w->collections, &w->sig, p->pending_collections[i]);
    free(p->collections);
    p->collections = p->pending_collections;
    p->collection_count = p->pending_collection_count;
    p->pending_collections = NULL;
    p->pending_collection_count = 0;
}

/* Drop every collection reference p holds. */
static void release_collections(host_world *w, host_plugin *p)
{
    for (size_t i = 0; i < p->collection_count; i++)
        host_collections_unref(&w->collections, &w->sig, p->collections[i]);
    free(p->collections);
    p->collections = NULL;
    p->collection_count = 0;
}

/* Move p's pending registrations into the world. All or nothing. */
static ecs_status commit(host_world *w, host_plugin *p)
{
    if (host_world_reserve_for(w, p) != ECS_OK) return ECS_ERR_NO_MEMORY;
    char **names = calloc(p->pending_api_count + 1, sizeof *names);
    if (!names) return ECS_ERR_NO_MEMORY;
    for (size_t i = 0; i < p->pending_api_count; i++) {
        host_pending_api *a = &p->pending_apis[i];
        ecs_status s =
            host_registry_publish(&w->registry, p, a->name, a->version, a->bytes, a->size);
        if (s != ECS_OK) {
            host_registry_withdraw(&w->registry, p);
            free(names);
            return s;
        }
        names[i] = a->name; /* ownership moves to api_names */
        a->name = NULL;
    }
    for (size_t i = 0; i < p->pending_manager_count; i++) {
        w->managers[w->manager_count++] = p->pending_managers[i];
        p->pending_managers[i] = NULL;
    }
    p->manager_count = p->pending_manager_count;
    p->pending_manager_count = 0;
    for (size_t i = 0; i < p->pending_system_count; i++) {
        w->systems[w->system_count++] = p->pending_systems[i];
        p->pending_systems[i] = NULL;
    }
    p->system_count = p->pending_system_count;
    p->pending_system_count = 0;
    commit_collections(w, p);
    p->api_names = names;
    p->api_count = p->pending_api_count;
    p->pending_entity_count = 0; /* the load stands: its entities stay */
    host_plugin_discard_pending(p);
    host_world_managers_changed(w);
    return ECS_OK;
}

static void release_memory(host_plugin *p, const char *when)
{
    if (p->mem.bytes == 0) return;
    host_warn(p->name, "leaked %zu bytes in %zu allocations %s: freed by the host", p->mem.bytes,
              p->mem.blocks, when);
    host_mem_release_all(&p->mem);
}

typedef struct load_call {
    host_plugin *p;
    const ecs_load_args *args;
    ecs_status status;
} load_call;

static void call_load(void *arg)
{
    load_call *c = arg;
    c->status = c->p->desc->load(&c->p->table, c->args, &c->p->state);
}

ecs_status host_plugin_load(host_world *w, host_plugin *p)
{
    host_api_init(p);
    ecs_load_args args = {sizeof args, NULL};
    p->in_load = true;
    p->registration_failed = false;
    load_call lc = {p, &args, ECS_OK};
    int sig = host_guard_run(call_load, &lc);
    ecs_status s = sig ? ECS_ERR_PLUGIN : lc.status;
    p->in_load = false;
    if (sig) { /* its state is unknown: do not call it again, take back what it holds */
        host_format(p->reason, sizeof p->reason, "load() crashed with %s",
                    host_guard_signal_name(sig));
        host_plugin_discard_pending(p);
        host_mem_release_all(&p->mem);
        return s;
    }
    char refusal[sizeof p->reason];
    snprintf(refusal, sizeof refusal, "%s", p->registration_failed ? p->reason : "");
    if (s == ECS_OK && p->registration_failed) {
        host_plugin_call_unload(p, p->desc, p->state, ECS_UNLOAD_SHUTDOWN);
        s = ECS_ERR_PLUGIN;
        host_format(p->reason, sizeof p->reason, "load() went on after a refused registration: %s",
                    refusal);
    } else if (s == ECS_OK && (s = commit(w, p)) != ECS_OK) {
        host_plugin_call_unload(p, p->desc, p->state, ECS_UNLOAD_SHUTDOWN);
        snprintf(p->reason, sizeof p->reason, "registering failed: %s", ecs_status_text(s));
    } else if (s != ECS_OK) {
        host_format(p->reason, sizeof p->reason, "load() failed: %s%s%s", ecs_status_text(s),
                    *refusal ? " after " : "", refusal);
    }
    if (s != ECS_OK) {
        host_plugin_discard_pending(p);
        release_memory(p, "after its failed load");
        return s;
    }
    if (p->manager_count == 0 && p->api_count == 0)
        host_warn("loader",
                  "%s: plugin '%s' loaded but registered no manager and published no "
                  "API",
                  p->path, p->name);
    p->status = HOST_PLUGIN_LOADED;
    char systems[48] = "";
    if (p->system_count) snprintf(systems, sizeof systems, ", %zu systems", p->system_count);
    host_info("loader", "loaded %s %s from %s (%zu managers, %zu APIs%s)", p->name, p->version,
              p->file, p->manager_count, p->api_count, systems);
    return ECS_OK;
}

void host_plugin_unload(host_world *w, host_plugin *p, ecs_unload_reason why)
{
    if (p->status != HOST_PLUGIN_LOADED) return;
    if (!p->crashed) host_plugin_call_unload(p, p->desc, p->state, why);
    size_t kept = 0;
    for (size_t i = 0; i < w->manager_count; i++) {
        host_manager *m = w->managers[i];
        if (m->owner != p)
            w->managers[kept++] = m; /* the others keep their order */
        else {
            host_sig_clear_bit(&w->sig, m->bit); /* its components are gone */
            free(m->name);
            free(m);
        }
    }
    w->manager_count = kept;
    p->manager_count = 0;
    kept = 0;
    for (size_t i = 0; i < w->system_count; i++) {
        if (w->systems[i]->owner != p)
            w->systems[kept++] = w->systems[i];
        else
            host_system_free(w->systems[i]);
    }
    w->system_count = kept;
    p->system_count = 0;
    release_collections(w, p);
    host_world_managers_changed(w); /* smaller: no memory needed */
    host_registry_withdraw(&w->registry, p);
    for (size_t i = 0; i < p->api_count; i++) free(p->api_names[i]);
    free(p->api_names); /* a load of the same record publishes them again */
    p->api_names = NULL;
    p->api_count = 0;
    if (p->crashed && p->mem.bytes) { /* not a leak: it never had the chance to free it */
        host_info(p->name,
                  "the host freed the %zu bytes in %zu allocations the plugin held when it "
                  "crashed (its unload() is not called after a crash)",
                  p->mem.bytes, p->mem.blocks);
        host_mem_release_all(&p->mem);
    }
    release_memory(p, "at unload");
    p->state = NULL;
    p->status = HOST_PLUGIN_UNLOADED;
}

void host_world_unload_all(host_world *w)
{
    for (size_t i = w->plugin_count; i-- > 0;)
        host_plugin_unload(w, w->plugins[i], ECS_UNLOAD_SHUTDOWN);
    host_world_announce_destroyed(w);
}

int host_world_push_plugin(host_world *w, host_plugin *p)
{
    if (w->plugin_count == w->plugin_cap) {
        size_t cap = w->plugin_cap ? w->plugin_cap * 2 : 16;
        host_plugin **v = realloc(w->plugins, cap * sizeof *v);
        if (!v) return -1;
        w->plugins = v;
        w->plugin_cap = cap;
    }
    w->plugins[w->plugin_count++] = p;
    return 0;
}

/* Open every file of the folder that passes the permission check. */
static ecs_status open_all(host_world *w, const char *dir, int folder, const host_load_options *opt)
{
    path_list files = {0};
    ecs_status s = ECS_OK;
    if (scan(w, dir, "", &files) != 0) {
        host_error("loader", "%s: cannot list the plugin folder: %s", dir, strerror(errno));
        s = ECS_ERR_IO;
    }
    if (files.n) qsort(files.v, files.n, sizeof *files.v, cmp_str);
    for (size_t i = 0; s == ECS_OK && i < files.n; i++) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", dir, files.v[i]);
        char why[sizeof((host_plugin *)0)->reason] = "";
        host_plugin_path_insecure(dir, files.v[i], false, opt->allow_insecure, why, sizeof why);
        host_plugin *p =
            *why ? new_record(w, full, files.v[i]) : host_plugin_open(w, full, files.v[i]);
        if (p) p->folder = folder, p->rank = folder * HOST_FOLDER_RANKS + HOST_FOLDER_RANKS - 1;
        if (p && *why) skip(w, p, "%s", why); /* listed by --list, never opened */
        if (!p || host_world_push_plugin(w, p) != 0) {
            host_plugin_free(p);
            s = ECS_ERR_NO_MEMORY;
        }
    }
    for (size_t i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    return s;
}

/* Skip a plugin whose name an earlier file already uses: in the same folder an error (two
 * builds of one plugin side by side), in an earlier folder the rule (the first folder wins,
 * as in PATH): one info line, not counted as bad. */
static void skip_duplicate_names(host_world *w)
{
    for (size_t i = 0; i < w->plugin_count; i++) {
        host_plugin *p = w->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND) continue;
        for (size_t j = 0; j < i; j++) {
            host_plugin *q = w->plugins[j];
            if (q->status != HOST_PLUGIN_FOUND || strcmp(q->name, p->name) != 0) continue;
            if (q->folder == p->folder) {
                skip(w, p, "plugin name '%s' is already used by %s", p->name, q->path);
            } else {
                snprintf(p->reason, sizeof p->reason,
                         "plugin '%s' is loaded from %s, an earlier folder", p->name, q->path);
                host_info("loader", "%s: skipped: %s", p->path, p->reason);
                p->status = HOST_PLUGIN_SKIPPED;
                host_plugin_release(p);
            }
            break;
        }
    }
}

/* Put the loadable plugins in load order at the front of w->plugins, skipping those whose
 * dependencies cannot be met. */
static ecs_status order_plugins(host_world *w)
{
    size_t n = w->plugin_count, *out = calloc(n + 1, sizeof *out),
           *idx = calloc(n + 1, sizeof *idx);
    host_order_node *nodes = calloc(n + 1, sizeof *nodes);
    host_order_result *res = calloc(n + 1, sizeof *res);
    host_plugin **sorted = calloc(n + 1, sizeof *sorted);
    ecs_status s = ECS_ERR_NO_MEMORY;
    if (!out || !idx || !nodes || !res || !sorted) goto error;
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        host_plugin *p = w->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND && p->status != HOST_PLUGIN_DISABLED) continue;
        idx[m] = i; /* disabled plugins take part, so their dependents hear why */
        nodes[m++] = (host_order_node){p->name, (const char *const *)p->deps, p->rank, p->file};
    }
    size_t count = host_order_sort(nodes, m, out, res);
    if (count == (size_t)-1) goto error;
    for (size_t i = 0; i < count; i++) sorted[k++] = w->plugins[idx[out[i]]];
    for (size_t i = 0; i < m; i++) {
        host_plugin *p = w->plugins[idx[i]];
        if (res[i].status == HOST_ORDER_MISSING_DEP)
            skip(w, p, "missing dependency '%s' (no loadable plugin of that name)", res[i].dep);
        else if (res[i].status == HOST_ORDER_DEP_SKIPPED)
            skip(w, p, "its dependency '%s' cannot be loaded", res[i].dep);
        else if (res[i].status == HOST_ORDER_CYCLE)
            skip(w, p,
                 "dependency cycle: '%s' and '%s' depend on each other (directly or "
                 "not)",
                 p->name, res[i].dep ? res[i].dep : "?");
    }
    for (size_t i = 0; i < n; i++) { /* then every plugin not placed, in file order */
        bool placed = false;
        for (size_t j = 0; j < k && !placed; j++) placed = sorted[j] == w->plugins[i];
        if (!placed) sorted[k++] = w->plugins[i];
    }
    if (n) memcpy(w->plugins, sorted, n * sizeof *sorted); /* plugins is NULL when n == 0 */
    s = ECS_OK;
error:
    free(out);
    free(idx);
    free(nodes);
    free(res);
    free(sorted);
    return s;
}

host_plugin *host_world_plugin_named(host_world *w, const char *name)
{
    for (size_t i = 0; i < w->plugin_count; i++) {
        host_plugin *p = w->plugins[i];
        if (p->status == HOST_PLUGIN_LOADED && strcmp(p->name, name) == 0) return p;
    }
    return NULL;
}

/* Can dir be a plugin folder: there, a folder, not writable by others? */
static ecs_status folder_usable(const char *dir, const host_load_options *opt)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        host_error("loader", "%s: plugin folder not found: %s", dir, strerror(errno));
        return ECS_ERR_NOT_FOUND;
    }
    if (!S_ISDIR(st.st_mode)) {
        host_error("loader", "%s: not a folder: give the folder that holds the plugins", dir);
        return ECS_ERR_INVALID_ARGUMENT;
    }
    char why[600];
    if (host_plugin_insecure("plugin folder", dir, opt->allow_insecure, why, sizeof why)) {
        host_error("loader", "plugin folder %s %s", dir, why);
        return ECS_ERR_INVALID_ARGUMENT;
    }
    return ECS_OK;
}

ecs_status host_world_load_dir(host_world *w, const char *dir, const host_load_options *opt)
{
    return host_world_load_dirs(w, &dir, 1, opt);
}

ecs_status host_world_load_dirs(host_world *w, const char *const *dirs, size_t n,
                                const host_load_options *opt)
{
    ecs_status s = ECS_OK;
    for (size_t k = 0; s == ECS_OK && k < n; k++) s = folder_usable(dirs[k], opt);
    for (size_t k = 0; s == ECS_OK && k < n; k++) s = open_all(w, dirs[k], (int)k, opt);
    if (s == ECS_OK) skip_duplicate_names(w);
    for (size_t k = 0; s == ECS_OK && k < n; k++)
        s = apply_manifest(w, dirs[k], (int)k, opt->allow_insecure);
    if (s == ECS_OK) s = order_plugins(w);
    if (s != ECS_OK) return s;
    for (size_t i = 0; i < w->plugin_count; i++) {
        host_plugin *p = w->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND) continue;
        const host_plugin *dep = NULL;
        for (char **d = p->deps; *d && !dep; d++) {
            const host_plugin *q = plugin_named(w, *d, -1);
            if (!q || q->status != HOST_PLUGIN_LOADED) dep = q;
        }
        if (dep && dep->status == HOST_PLUGIN_DISABLED)
            skip(w, p, "its dependency '%s' is disabled by %s", dep->name, MANIFEST_NAME);
        else if (dep)
            skip(w, p, "its dependency '%s' failed to load", dep->name);
        else if (host_plugin_load(w, p) != ECS_OK) {
            char reason[sizeof p->reason];
            memcpy(reason, p->reason, sizeof reason);
            skip(w, p, "%s", reason);
        }
    }
    return ECS_OK;
}

/* The systems line of --list: "  systems: name (weight w) ...", none without systems. */
static void print_systems(const host_world *w, const host_plugin *p, FILE *out)
{
    if (!p->system_count) return;
    fprintf(out, "  systems:");
    for (size_t j = 0; j < w->system_count; j++)
        if (w->systems[j]->owner == p)
            fprintf(out, " %s (weight %d)", w->systems[j]->name, (int)w->systems[j]->desc.weight);
    fprintf(out, "\n");
}

void host_world_print_list(const host_world *w, FILE *out)
{
    for (size_t i = 0; i < w->plugin_count; i++) {
        const host_plugin *p = w->plugins[i];
        fprintf(out, "%s\n", p->file);
        if (p->name) {
            fprintf(out, "  name: %s  version: %s  abi: %u.%u  state: %u\n", p->name, p->version,
                    p->abi_major, p->abi_minor, p->state_version);
            fprintf(out, "  depends on:");
            for (char **d = p->deps; d && *d; d++) fprintf(out, " %s", *d);
            fprintf(out, "%s\n  managers:", p->deps && *p->deps ? "" : " -");
            size_t shown = 0;
            for (size_t j = 0; j < w->manager_count; j++)
                if (w->managers[j]->owner == p) fprintf(out, " %s", w->managers[j]->name), shown++;
            fprintf(out, "%s\n  apis:", shown ? "" : " -");
            for (size_t j = 0; j < p->api_count; j++) fprintf(out, " %s", p->api_names[j]);
            fprintf(out, "%s\n", p->api_count ? "" : " -");
            print_systems(w, p, out);
        }
        const char *st = p->status == HOST_PLUGIN_LOADED     ? "loads"
                         : p->status == HOST_PLUGIN_DISABLED ? "disabled"
                                                             : "does not load";
        fprintf(out, "  status: %s%s%s\n", st, *p->reason ? ": " : "", p->reason);
        size_t dir_len = strlen(p->path) > strlen(p->file) ? strlen(p->path) - strlen(p->file) : 1;
        fprintf(out, "  folder: %.*s\n", (int)(dir_len - 1), p->path);
    }
}

/* ---- --safe: plugins whose code crashed ---- */

void host_plugin_crashed(host_world *w, host_plugin *p, int sig, const char *what)
{
    (void)w;
    if (p->crashed) return;
    p->crashed = true;
    static const char after[] = "at the end of this frame it goes back to its last good "
                                "version, or is unloaded until a new build";
    if (host_guard_is_stop(sig)) /* main.c: the second SIGINT/SIGTERM */
        host_error("guard",
                   "plugin '%s' (%s) did not return from %s and was abandoned at the "
                   "second %s: %s",
                   p->name, p->file, what, host_guard_signal_name(sig), after);
    else
        host_error("guard", "plugin '%s' (%s) crashed with %s in %s: %s", p->name, p->file,
                   host_guard_signal_name(sig), what, after);
}

typedef struct keep_call {
    host_world *w;
    host_plugin *p;
    bool kept;
} keep_call;

static void call_keep(void *arg)
{
    keep_call *c = arg;
    c->kept = host_scene_keep_plugin(c->w, c->p);
}

bool host_plugin_depends_on(const host_world *w, const host_plugin *q, const host_plugin *p)
{
    if (q == p || q->status != HOST_PLUGIN_LOADED || !p->name) return false;
    for (char **d = q->deps; d && *d; d++)
        if (strcmp(*d, p->name) == 0) return true;
    for (size_t i = 0; i < q->use_count; i++) {
        const host_api_entry *e = host_registry_entry(&w->registry, q->uses[i].name);
        if (e && e->owner == p) return true;
    }
    return false;
}

void host_world_park_dependents(host_world *w, host_plugin *p, const char *why)
{
    for (size_t i = w->plugin_count; i-- > 0;) { /* dependents were loaded after providers */
        host_plugin *q = w->plugins[i];
        if (!host_plugin_depends_on(w, q, p)) continue;
        host_world_park_dependents(w, q, why);
        keep_call c = {w, q, false};
        if (host_guard_run(call_keep, &c) != 0) c.kept = false;
        host_warn("loader", "plugin '%s' parked: it depends on plugin '%s', which %s; %s%s%s",
                  q->name, p->name, why,
                  c.kept ? "its components are kept, and it comes back when '" : "",
                  c.kept ? p->name : "its components could not be kept", c.kept ? "' does" : "");
        host_plugin_unload(w, q, ECS_UNLOAD_SHUTDOWN);
        host_reload_forget_previous(q);
        host_plugin_release(q);
        host_format(q->reason, sizeof q->reason, "parked: it needs plugin '%s'", p->name);
        q->status = HOST_PLUGIN_PARKED;
    }
}

void host_world_drop_crashed(host_world *w)
{
    for (size_t i = 0; i < w->plugin_count; i++) {
        host_plugin *p = w->plugins[i];
        if (!p->crashed || p->status != HOST_PLUGIN_LOADED) continue;
        if (host_reload_rollback(w, p)) continue; /* the last good version runs again */
        host_world_park_dependents(w, p, "crashed");
        keep_call c = {w, p, false}; /* its save code may crash too: guarded */
        if (host_guard_run(call_keep, &c) != 0) c.kept = false;
        host_warn("guard", "plugin '%s' unloaded after its crash%s", p->name,
                  c.kept ? "; its components are kept and come back with its next build"
                         : "; its components could not be kept");
        host_plugin_unload(w, p, ECS_UNLOAD_SHUTDOWN); /* its unload() is not called */
        host_plugin_release(p);
        snprintf(p->reason, sizeof p->reason, "it crashed");
    }
}
