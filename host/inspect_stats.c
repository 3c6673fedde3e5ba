/* SPDX-License-Identifier: MIT */
/* inspect_stats.c: the world over time (GET /api/stats, inspect_int.h): once a second, at a
 * frame boundary, a sample of the live entities, each manager's components and its plugin's
 * memory, the frame intervals of that second (mean and longest) and the reloads so far; the
 * last 60 samples (the last minute) and, one a minute, the last 60 minutes (the hour: the
 * minute's mean interval, its longest, the counts at its end).
 *
 * Rings of fixed size: a sample is a few hundred bytes, a manager past STAT_MANAGERS is left
 * out of the samples (the others keep being counted).
 */
#include <stdio.h>
#include <string.h>

#include "inspect_int.h"

#define SECOND_NS 1000000000ull

static void sample_take(host_inspector *in, stat_sample *s, uint64_t now)
{
    host_session *hs = in->hs;
    s->t = (double)(now - in->start_ns) / 1e9;
    s->entities = host_entities_live(hs->world->entities);
    s->frame_mean_us = in->st_frames ? (float)(in->st_sum_ns / in->st_frames / 1e3) : 0;
    s->frame_max_us = (float)(in->st_max_ns / 1e3);
    s->reloads = 0;
    for (size_t i = 0; i < hs->plugin_count; i++) s->reloads += hs->plugins[i]->reload_count;
    s->managers = 0;
    for (size_t i = 0; i < hs->world->manager_count && s->managers < STAT_MANAGERS; i++) {
        const host_manager *m = hs->world->managers[i];
        stat_manager *sm = &s->m[s->managers++];
        snprintf(sm->name, sizeof sm->name, "%s", m->name);
        sm->components = m->desc.count ? m->desc.count(m->desc.state) : 0;
        sm->bytes = m->owner ? host_owner_plugin(m->owner)->mem.bytes : 0;
    }
}

/* The minute's sample for the hour: the mean of its means, its longest, its last counts. */
static void minute_of(const host_inspector *in, stat_sample *out)
{
    double sum = 0;
    float most = 0;
    for (uint32_t k = 0; k < in->sec_n; k++) {
        const stat_sample *s = &in->sec[(in->sec_at + STAT_RING - in->sec_n + k) % STAT_RING];
        sum += s->frame_mean_us;
        most = s->frame_max_us > most ? s->frame_max_us : most;
    }
    *out = in->sec[(in->sec_at + STAT_RING - 1) % STAT_RING];
    out->frame_mean_us = in->sec_n ? (float)(sum / in->sec_n) : 0;
    out->frame_max_us = most;
}

void inspect_stats_frame(host_inspector *in, uint64_t now, uint64_t interval_ns)
{
    in->st_sum_ns += interval_ns;
    in->st_frames++;
    if (interval_ns > in->st_max_ns) in->st_max_ns = interval_ns;
    if (now - in->st_last_ns < SECOND_NS) return;
    in->st_last_ns = now;
    sample_take(in, &in->sec[in->sec_at], now);
    in->sec_at = (in->sec_at + 1) % STAT_RING;
    if (in->sec_n < STAT_RING) in->sec_n++;
    in->st_sum_ns = in->st_max_ns = 0;
    in->st_frames = 0;
    if (++in->sec_since_minute < STAT_RING) return;
    in->sec_since_minute = 0;
    minute_of(in, &in->min[in->min_at]);
    in->min_at = (in->min_at + 1) % STAT_RING;
    if (in->min_n < STAT_RING) in->min_n++;
}

static cJSON *samples_json(const stat_sample *ring, uint32_t at, uint32_t n)
{
    cJSON *list = cJSON_CreateArray();
    for (uint32_t k = 0; k < n; k++) {
        const stat_sample *s = &ring[(at + STAT_RING - n + k) % STAT_RING];
        cJSON *o = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(o, "managers");
        cJSON_AddNumberToObject(o, "t", s->t);
        cJSON_AddNumberToObject(o, "entities", s->entities);
        cJSON_AddNumberToObject(o, "frame_mean_us", s->frame_mean_us);
        cJSON_AddNumberToObject(o, "frame_max_us", s->frame_max_us);
        cJSON_AddNumberToObject(o, "reloads", s->reloads);
        for (uint32_t i = 0; i < s->managers; i++) {
            cJSON *one = cJSON_AddObjectToObject(m, s->m[i].name);
            cJSON_AddNumberToObject(one, "components", s->m[i].components);
            cJSON_AddNumberToObject(one, "bytes", (double)s->m[i].bytes);
        }
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

cJSON *inspect_stats_json(host_inspector *in)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddItemToObject(v, "minute", samples_json(in->sec, in->sec_at, in->sec_n));
    cJSON_AddItemToObject(v, "hour", samples_json(in->min, in->min_at, in->min_n));
    return v;
}
