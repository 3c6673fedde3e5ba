/* SPDX-License-Identifier: MIT */
/* fixture.c: an in-process host_session over a temporary folder of plugin symlinks. */
#include "fixture.h"

#include <cjson/cJSON.h>

#include "jparse.h"
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
    f->s = host_session_new();
    f->w = f->s ? f->s->world : NULL;
    host_load_options opt = {0};
    if (!f->s || host_load_dir(f->s, f->dir, &opt) != ECS_OK || f->s->bad_plugins) {
        fprintf(stderr, "fixture: loading %s failed\n", f->dir);
        return -1;
    }
    return 0;
}

const void *fixture_api(fixture *f, const char *name)
{
    return host_registry_find(&f->s->registry, name, 1, NULL);
}

void fixture_frames(fixture *f, int n)
{
    for (int i = 0; i < n; i++) host_world_frame(f->w);
}

void fixture_close(fixture *f)
{
    host_session_free(f->s);
    f->s = NULL;
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

/* The fixture resolves no scene id: the host's message for one it does not know. */
static bool no_ids(void *ctx, const char *id, ecs_entity *out, char *why, size_t why_len)
{
    (void)ctx;
    *out = ecs_entity_null();
    snprintf(why, why_len, "reference to an unknown id '%s'", id);
    return false;
}

ecs_status fixture_load_json(const ecs_manager_desc *m, ecs_entity e, const char *text)
{
    if (!m->read_component) {
        if (!text) return m->load_component(m->state, e, NULL);
        cJSON *json = cJSON_Parse(text);
        if (!json) return ECS_ERR_BAD_VALUE;
        ecs_status s = m->load_component(m->state, e, json);
        cJSON_Delete(json);
        return s;
    }
    if (!text) return m->read_component(m->state, e, NULL);
    host_jreader *r = host_jr_new();
    if (!r) return ECS_ERR_NO_MEMORY;
    host_jr_start(r, text, strlen(text), 0, HOST_JR_STRICT);
    host_jr_on_entity(r, no_ids, NULL);
    ecs_status s = m->read_component(m->state, e, host_jr_api(r));
    if (s == ECS_OK && !host_jr_complete(r) && !host_jr_error(r, NULL, NULL, NULL)) {
        fprintf(stderr, "# %s returned from read_component before reading its whole value\n",
                m->name);
        s = ECS_ERR_PLUGIN;
    }
    if (s == ECS_OK) host_jr_finish_document(r); /* the test's text: nothing after the value */
    size_t at;
    const char *message;
    if (host_jr_error(r, &at, NULL, &message)) {
        fprintf(stderr, "[error] scene: %s: byte %zu: %s\n", m->name, at, message);
        if (s == ECS_OK) s = ECS_ERR_BAD_VALUE;
    }
    host_jr_free(r);
    return s;
}
