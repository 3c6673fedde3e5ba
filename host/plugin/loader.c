/* SPDX-License-Identifier: MIT */
/* loader.c: finding plugin files in the plugin folders, their manifests, the load order,
 * loading them all at start and unloading them at exit (loader.h).
 *
 * Loading the folders: list every *.so in each and one level of subfolders (sorted by
 * relative path) -> refuse files others may write -> open each (plugin.h) -> skip named
 * duplicates -> apply each folder's manifest.json (rank, config, disabled) -> order
 * (dependencies, folder, manifest, file) -> load each (plugin.h). A bad plugin is logged
 * with its file and reason and skipped; the others go on.
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
#include "loader.h"
#include "hostapi.h"
#include "perm.h"
#include "plugin.h"
#include "session.h"

#define MANIFEST_NAME "manifest.json"

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
static int scan(host_session *hs, const char *dir, const char *sub, path_list *out)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", dir, *sub ? "/" : "", sub);
    DIR *d = opendir(path);
    if (!d && *sub) { /* an unreadable subfolder is not fatal, but it is said */
        host_error("loader", "%s: skipped: cannot list this subfolder: %s", path, strerror(errno));
        hs->bad_plugins++;
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
            rc = scan(hs, dir, rel, out); /* meson's object folders end in .p */
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

/* ---- manifest ---- */

/* The plugin of folder `folder` (any: -1) named name, or NULL. */
static host_plugin *plugin_named(host_session *hs, const char *name, int folder)
{
    for (size_t i = 0; i < hs->plugin_count; i++)
        if (hs->plugins[i]->name && strcmp(hs->plugins[i]->name, name) == 0 &&
            (folder < 0 || hs->plugins[i]->folder == folder))
            return hs->plugins[i];
    return NULL;
}

/* Apply dir/manifest.json when it exists: plugins[i] = {name, config?, disabled?}. */
static ecs_status apply_manifest(host_session *hs, const char *dir, int folder, bool allow_insecure)
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
        host_plugin *p = plugin_named(hs, name->valuestring, folder);
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

void host_unload_all(host_session *hs)
{
    for (size_t i = hs->plugin_count; i-- > 0;)
        host_plugin_unload(hs, hs->plugins[i], ECS_UNLOAD_SHUTDOWN);
    host_world_announce_destroyed(hs->world);
}

/* Open every file of the folder that passes the permission check. */
static ecs_status open_all(host_session *hs, const char *dir, int folder,
                           const host_load_options *opt)
{
    path_list files = {0};
    ecs_status s = ECS_OK;
    if (scan(hs, dir, "", &files) != 0) {
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
            *why ? host_plugin_new(hs, full, files.v[i]) : host_plugin_open(hs, full, files.v[i]);
        if (p) p->folder = folder, p->rank = folder * HOST_FOLDER_RANKS + HOST_FOLDER_RANKS - 1;
        if (p && *why) host_plugin_skip(hs, p, "%s", why); /* listed by --list, never opened */
        if (!p || host_plugin_push(hs, p) != 0) {
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
static void skip_duplicate_names(host_session *hs)
{
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND) continue;
        for (size_t j = 0; j < i; j++) {
            host_plugin *q = hs->plugins[j];
            if (q->status != HOST_PLUGIN_FOUND || strcmp(q->name, p->name) != 0) continue;
            if (q->folder == p->folder) {
                host_plugin_skip(hs, p, "plugin name '%s' is already used by %s", p->name, q->path);
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

/* Put the loadable plugins in load order at the front of hs->plugins, skipping those whose
 * dependencies cannot be met. */
static ecs_status order_plugins(host_session *hs)
{
    size_t n = hs->plugin_count, *out = calloc(n + 1, sizeof *out),
           *idx = calloc(n + 1, sizeof *idx);
    host_order_node *nodes = calloc(n + 1, sizeof *nodes);
    host_order_result *res = calloc(n + 1, sizeof *res);
    host_plugin **sorted = calloc(n + 1, sizeof *sorted);
    ecs_status s = ECS_ERR_NO_MEMORY;
    if (!out || !idx || !nodes || !res || !sorted) goto error;
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        host_plugin *p = hs->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND && p->status != HOST_PLUGIN_DISABLED) continue;
        idx[m] = i; /* disabled plugins take part, so their dependents hear why */
        nodes[m++] = (host_order_node){p->name, (const char *const *)p->deps, p->rank, p->file};
    }
    size_t count = host_order_sort(nodes, m, out, res);
    if (count == (size_t)-1) goto error;
    for (size_t i = 0; i < count; i++) sorted[k++] = hs->plugins[idx[out[i]]];
    for (size_t i = 0; i < m; i++) {
        host_plugin *p = hs->plugins[idx[i]];
        if (res[i].status == HOST_ORDER_MISSING_DEP)
            host_plugin_skip(hs, p, "missing dependency '%s' (no loadable plugin of that name)",
                             res[i].dep);
        else if (res[i].status == HOST_ORDER_DEP_SKIPPED)
            host_plugin_skip(hs, p, "its dependency '%s' cannot be loaded", res[i].dep);
        else if (res[i].status == HOST_ORDER_CYCLE)
            host_plugin_skip(hs, p,
                             "dependency cycle: '%s' and '%s' depend on each other (directly or "
                             "not)",
                             p->name, res[i].dep ? res[i].dep : "?");
    }
    for (size_t i = 0; i < n; i++) { /* then every plugin not placed, in file order */
        bool placed = false;
        for (size_t j = 0; j < k && !placed; j++) placed = sorted[j] == hs->plugins[i];
        if (!placed) sorted[k++] = hs->plugins[i];
    }
    if (n) memcpy(hs->plugins, sorted, n * sizeof *sorted); /* plugins is NULL when n == 0 */
    s = ECS_OK;
error:
    free(out);
    free(idx);
    free(nodes);
    free(res);
    free(sorted);
    return s;
}

/* Can folder k (dir) be a plugin folder: there, a folder, not writable by others? One
 * that may be missing (ECS_PLUGIN_PATH's) and is not there: *missing, one warning, ECS_OK. */
static ecs_status folder_usable(const char *dir, size_t k, const host_load_options *opt,
                                bool *missing)
{
    struct stat st;
    if (stat(dir, &st) != 0 && opt->may_be_missing && opt->may_be_missing[k] &&
        (errno == ENOENT || errno == ENOTDIR)) {
        host_warn("loader",
                  "%s: ECS_PLUGIN_PATH names a folder that is not there (%s): passed over, as "
                  "PATH's entries are",
                  dir, strerror(errno));
        *missing = true;
        return ECS_OK;
    }
    if (stat(dir, &st) != 0) {
        host_error("loader", "%s: plugin folder not found: %s", dir, strerror(errno));
        return ECS_ERR_NOT_FOUND;
    }
    if (!S_ISDIR(st.st_mode)) {
        host_error("loader", "%s: not a folder: give the folder that holds the plugins", dir);
        return ECS_ERR_INVALID_ARGUMENT;
    }
    char why[PATH_MAX + 600];
    if (host_folder_insecure("plugin folder", dir, opt->allow_insecure, why, sizeof why)) {
        host_error("loader", "plugin folder %s %s", dir, why);
        return ECS_ERR_INVALID_ARGUMENT;
    }
    return ECS_OK;
}

ecs_status host_load_dir(host_session *hs, const char *dir, const host_load_options *opt)
{
    return host_load_dirs(hs, &dir, 1, opt);
}

ecs_status host_load_dirs(host_session *hs, const char *const *dirs, size_t n,
                          const host_load_options *opt)
{
    bool *missing = calloc(n + 1, sizeof *missing);
    ecs_status s = missing ? ECS_OK : ECS_ERR_NO_MEMORY;
    for (size_t k = 0; s == ECS_OK && k < n; k++) s = folder_usable(dirs[k], k, opt, &missing[k]);
    for (size_t k = 0; s == ECS_OK && k < n; k++)
        if (!missing[k]) s = open_all(hs, dirs[k], (int)k, opt);
    free(missing);
    if (s == ECS_OK) skip_duplicate_names(hs);
    for (size_t k = 0; s == ECS_OK && k < n; k++)
        s = apply_manifest(hs, dirs[k], (int)k, opt->allow_insecure);
    if (s == ECS_OK) s = order_plugins(hs);
    if (s != ECS_OK) return s;
    for (size_t i = 0; i < hs->plugin_count; i++) {
        host_plugin *p = hs->plugins[i];
        if (p->status != HOST_PLUGIN_FOUND) continue;
        const host_plugin *dep = NULL;
        for (char **d = p->deps; *d && !dep; d++) {
            const host_plugin *q = plugin_named(hs, *d, -1);
            if (!q || q->status != HOST_PLUGIN_LOADED) dep = q;
        }
        if (dep && dep->status == HOST_PLUGIN_DISABLED)
            host_plugin_skip(hs, p, "its dependency '%s' is disabled by %s", dep->name,
                             MANIFEST_NAME);
        else if (dep)
            host_plugin_skip(hs, p, "its dependency '%s' failed to load", dep->name);
        else if (host_plugin_load(hs, p) != ECS_OK) {
            char reason[sizeof p->reason];
            memcpy(reason, p->reason, sizeof reason);
            host_plugin_skip(hs, p, "%s", reason);
        }
    }
    return ECS_OK;
}

/* ---- --list ---- */

/* s escaped as the log escapes it (\n, \xNN) into buf (ESCAPED bytes): a version, a
 * dependency's name, a reason, a file or folder name may hold a newline or a terminal's
 * escape, and --list prints one line per field, whoever gave it. */
#define ESCAPED (4 * PATH_MAX + 1)
static const char *escaped(char *buf, const char *s)
{
    host_log_escape(buf, ESCAPED, s ? s : "");
    return buf;
}

/* The systems line of --list: "  systems: name (weight hs) ...", none without systems. */
static void print_systems(const host_session *hs, const host_plugin *p, FILE *out)
{
    if (!p->system_count) return;
    fprintf(out, "  systems:");
    for (size_t j = 0; j < hs->world->system_count; j++)
        if (hs->world->systems[j]->owner == p)
            fprintf(out, " %s (weight %d)", hs->world->systems[j]->name,
                    (int)hs->world->systems[j]->desc.weight);
    fprintf(out, "\n");
}

/* The lines of p's description: name, version, ABI, dependencies, managers, APIs. Names
 * of plugins, managers and APIs were checked when they were given: printable. */
static void print_description(const host_session *hs, const host_plugin *p, FILE *out, char *buf)
{
    fprintf(out, "  name: %s  version: %s  abi: %u.%u  state: %u\n", p->name,
            escaped(buf, p->version), p->abi_major, p->abi_minor, p->state_version);
    fprintf(out, "  depends on:");
    for (char **d = p->deps; d && *d; d++) fprintf(out, " %s", escaped(buf, *d));
    fprintf(out, "%s\n  managers:", p->deps && *p->deps ? "" : " -");
    size_t shown = 0;
    for (size_t j = 0; j < hs->world->manager_count; j++)
        if (hs->world->managers[j]->owner == p)
            fprintf(out, " %s", hs->world->managers[j]->name), shown++;
    fprintf(out, "%s\n  apis:", shown ? "" : " -");
    for (size_t j = 0; j < p->api_count; j++) fprintf(out, " %s", p->api_names[j]);
    fprintf(out, "%s\n", p->api_count ? "" : " -");
    print_systems(hs, p, out);
}

void host_print_list(const host_session *hs, FILE *out)
{
    char *buf = malloc(ESCAPED), folder[PATH_MAX];
    if (!buf) {
        host_error("loader", "--list: out of memory");
        return;
    }
    for (size_t i = 0; i < hs->plugin_count; i++) {
        const host_plugin *p = hs->plugins[i];
        fprintf(out, "%s\n", escaped(buf, p->file));
        if (p->name) print_description(hs, p, out, buf);
        const char *st = p->status == HOST_PLUGIN_LOADED     ? "loads"
                         : p->status == HOST_PLUGIN_DISABLED ? "disabled"
                                                             : "does not load";
        fprintf(out, "  status: %s%s%s\n", st, *p->reason ? ": " : "", escaped(buf, p->reason));
        size_t dir_len = strlen(p->path) > strlen(p->file) ? strlen(p->path) - strlen(p->file) : 1;
        snprintf(folder, sizeof folder, "%.*s", (int)(dir_len - 1), p->path);
        fprintf(out, "  folder: %s\n", escaped(buf, folder));
    }
    free(buf);
}
