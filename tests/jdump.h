/* SPDX-License-Identifier: MIT */
/* jdump.h: a JSON value read whole through an ecs_json_reader and written down as text,
 * for tests that read one value two ways (with the read-ahead's tokens and without them)
 * and compare what they got. Header only: test_jread.c and tests/fuzz/fuzz_json.c. */
#ifndef TESTS_JDUMP_H
#define TESTS_JDUMP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ecs_plugin.h"

/* The value api is at, appended to out (*len bytes so far, out holding size): keys,
 * strings, numbers and literals as the reader gives them; an array element by element, or
 * with f32 > 0 whole by array_f32 as f32 floats (their bits), nothing when that fails. */
static void jdump_value(ecs_json_reader *api, uint32_t f32, char *out, size_t size, size_t *len)
{
    const char *s;
    size_t sl;
    double x;
    bool b;
    float v[16];
#define PUT(...) (*len += (size_t)snprintf(out + *len, *len < size ? size - *len : 0, __VA_ARGS__))
    switch (api->peek(api)) {
    case ECS_JSON_OBJECT:
        api->begin_object(api);
        PUT("{");
        while (api->key(api, &s)) {
            PUT("key %s:", s);
            jdump_value(api, f32, out, size, len);
        }
        PUT("}");
        break;
    case ECS_JSON_ARRAY:
        if (f32 > 0 && f32 <= 16) {
            if (!api->array_f32(api, v, f32)) break;
            for (uint32_t k = 0; k < f32; k++) {
                uint32_t bits;
                memcpy(&bits, &v[k], sizeof bits);
                PUT("f32 %08x;", (unsigned)bits);
            }
            break;
        }
        api->begin_array(api);
        PUT("[");
        while (api->more(api)) jdump_value(api, f32, out, size, len);
        PUT("]");
        break;
    case ECS_JSON_STRING:
        if (api->string(api, &s, &sl)) PUT("str %zu %s;", sl, s);
        break;
    case ECS_JSON_NUMBER:
        if (api->number(api, &x)) PUT("num %.17g;", x);
        break;
    case ECS_JSON_TRUE:
    case ECS_JSON_FALSE:
        if (api->boolean(api, &b)) PUT("%s;", b ? "true" : "false");
        break;
    default:
        if ((api->skip)(api)) PUT("null;");
        break;
    }
#undef PUT
}

#endif
