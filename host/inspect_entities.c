/* SPDX-License-Identifier: MIT */
/* inspect_entities.c: entities as the inspector lists them (inspect_int.h): an id as text,
 * and the items of a list (id, scene id, name, components; with full, their data), made from
 * the JSON a scene save would write of them. Used by the entity API (inspect_api.c) and the
 * index's pages (inspect_index.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_int.h"
#include "scene.h"

void inspect_id_text(ecs_entity e, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u", ecs_entity_index(e), ecs_entity_generation(e));
}

/* The JSON array of entities list[0..n), as the scene writer writes them (dead ones left
 * out). */
cJSON *inspect_entities_of(host_session *hs, const ecs_entity *list, uint32_t n)
{
    size_t len = 0;
    char *text = host_scene_entities_text(hs->scene, list, n, &len);
    cJSON *v = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    return v;
}

/* One item of the entity list from its scene object (full: with its components as
 * "data"). */
static cJSON *entity_item(ecs_entity e, const cJSON *obj, bool full)
{
    char id[32];
    inspect_id_text(e, id, sizeof id);
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "id", id);
    cJSON_AddNumberToObject(v, "raw", e.id);
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(obj, "id");
    cJSON_AddStringToObject(v, "scene_id", cJSON_IsString(sid) ? sid->valuestring : "");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "debug_name");
    cJSON_AddStringToObject(v, "name", cJSON_IsString(name) ? name->valuestring : "");
    cJSON *comps = cJSON_AddArrayToObject(v, "components");
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
    {
        if (strcmp(c->string, "id")) cJSON_AddItemToArray(comps, cJSON_CreateString(c->string));
    }
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(obj, "transform");
    const cJSON *parent = cJSON_GetObjectItemCaseSensitive(tf, "parent");
    if (cJSON_IsString(parent))
        cJSON_AddStringToObject(v, "parent", parent->valuestring);
    else
        cJSON_AddNullToObject(v, "parent");
    if (full) {
        cJSON *data = cJSON_Duplicate(obj, 1);
        cJSON_DeleteItemFromObjectCaseSensitive(data, "id");
        cJSON_AddItemToObject(v, "data", data);
    }
    return v;
}

bool inspect_entity_items(host_session *hs, const ecs_entity *list, uint32_t n, bool full,
                          cJSON *items)
{
    ecs_entity *live = malloc((n ? n : 1) * sizeof *live);
    uint32_t k = 0;
    for (uint32_t i = 0; live && i < n; i++) /* the writer leaves dead ones out: so do we */
        if (host_entity_alive(hs->world->entities, list[i])) live[k++] = list[i];
    cJSON *objs = live && k ? inspect_entities_of(hs, live, k) : NULL;
    bool ok = live && (!k || objs);
    const cJSON *obj = objs ? objs->child : NULL;
    for (uint32_t i = 0; i < k && obj; i++, obj = obj->next)
        cJSON_AddItemToArray(items, entity_item(live[i], obj, full));
    cJSON_Delete(objs);
    free(live);
    return ok;
}
