/* fixture.c: an in-process host_world over a temporary folder of plugin symlinks. */
#include "fixture.h"

#include <cjson/cJSON.h>

#include "jwrite.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fixture_open(fixture *f, const char *const *plugin_paths)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/ecs-fixture-XXXXXX");
    if (!mkdtemp(f->dir)) {
        perror("fixture: mkdtemp");
        return -1;
    }
    for (const char *const *p = plugin_paths; *p; p++) {
        const char *base = strrchr(*p, '/');
        char link[512];
        snprintf(link, sizeof link, "%s/%s", f->dir, base ? base + 1 : *p);
        if (symlink(*p, link) != 0) {
            perror(link);
            return -1;
        }
        f->links++;
    }
    f->w = host_world_new();
    host_load_options opt = {0};
    if (!f->w || host_world_load_dir(f->w, f->dir, &opt) != ECS_OK || f->w->bad_plugins) {
        fprintf(stderr, "fixture: loading %s failed\n", f->dir);
        return -1;
    }
    return 0;
}

const void *fixture_api(fixture *f, const char *name)
{
    return host_registry_find(&f->w->registry, name, 1, NULL);
}

void fixture_frames(fixture *f, int n)
{
    for (int i = 0; i < n; i++) host_world_frame(f->w);
}

void fixture_close(fixture *f)
{
    host_world_free(f->w);
    f->w = NULL;
    DIR *d = opendir(f->dir);
    struct dirent *de;
    while (d && (de = readdir(d))) { /* only the links this fixture made live here */
        if (de->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", f->dir, de->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    if (rmdir(f->dir) != 0) fprintf(stderr, "fixture: could not remove %s\n", f->dir);
}

static const char *ref_id(void *ctx, ecs_entity e)
{
    static char id[32];
    snprintf(id, sizeof id, "ref%u", ecs_entity_index(e));
    return id;
}

ecs_status fixture_save_json(const ecs_manager_desc *m, ecs_entity e, cJSON **out)
{
    if (!m->write_component) return m->save_component(m->state, e, out);
    if (!out) return m->write_component(m->state, e, NULL);
    *out = NULL;
    host_jwriter w;
    host_jw_init(&w);
    w.id_of = ref_id;
    host_jw_start(&w, 0);
    ecs_status s = m->write_component(m->state, e, &w.api);
    if (s == ECS_OK && !host_jw_finish(&w)) {
        fprintf(stderr, "# %s wrote invalid JSON: %s\n", m->name, w.error);
        s = ECS_ERR_BAD_VALUE;
    }
    if (s == ECS_OK && w.len) {
        *out = cJSON_ParseWithLength(w.buf, w.len);
        if (!*out) s = ECS_ERR_BAD_VALUE;
    }
    host_jw_free(&w);
    return s;
}
