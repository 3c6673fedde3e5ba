/* SPDX-License-Identifier: MIT */
/* pstate.c: a plugin's own state as JSON text (pstate.h): one host writer or reader per
 * call, the plugin's write or read in between, and its mistakes turned into one reason. A
 * plugin state holds no entity references: the writer has no ids to give (entity() fails
 * the write), the reader none to resolve.
 */
#include "pstate.h"

#include <stdio.h>
#include <stdlib.h>

#include "jparse.h"
#include "jwrite.h"

char *host_pstate_write(const ecs_plugin_state_desc *d, size_t *len, char *why, size_t whylen)
{
    host_jwriter jw;
    host_jw_init(&jw);
    host_jw_start(&jw, 0);
    ecs_status s = d->write(d->state, &jw.api);
    bool ok = s == ECS_OK && host_jw_finish(&jw) && host_jw_reserve(&jw, 1);
    if (!ok) {
        snprintf(why, whylen, "%s",
                 s != ECS_OK ? ecs_status_text(s)
                 : jw.error  ? jw.error
                             : "out of memory");
        host_jw_free(&jw);
        return NULL;
    }
    char *text = jw.buf ? jw.buf : calloc(1, 1); /* nothing written: "" */
    if (text) text[jw.len] = '\0';
    *len = jw.len;
    free(jw.keys);
    if (!text) snprintf(why, whylen, "out of memory");
    return text;
}

ecs_status host_pstate_read(const ecs_plugin_state_desc *d, const char *text, size_t len, size_t at,
                            size_t *err_at, char *why, size_t whylen)
{
    host_jreader *r = host_jr_new();
    *err_at = at;
    if (!r) return snprintf(why, whylen, "out of memory"), ECS_ERR_NO_MEMORY;
    host_jr_start(r, text, len, at, HOST_JR_STRICT);
    ecs_status s = d->read(d->state, host_jr_api(r));
    const char *msg = NULL;
    host_jparse_status syntax = HOST_JPARSE_OK;
    if (host_jr_error(r, err_at, &syntax, &msg)) {
        snprintf(why, whylen, "%s", msg ? msg : host_jparse_message(syntax));
        if (s == ECS_OK) s = ECS_ERR_BAD_VALUE;
    } else if (s != ECS_OK) {
        snprintf(why, whylen, "the plugin refused it: %s", ecs_status_text(s));
    } else if (!host_jr_complete(r)) {
        snprintf(why, whylen, "the plugin's read returned before reading the whole value");
        s = ECS_ERR_PLUGIN;
    }
    host_jr_free(r);
    return s;
}
