/* SPDX-License-Identifier: MIT */
/* test_cpp_plugin.c: a plugin written in C++ (tests/plugins_cpp/cpp_counter.cpp, a class
 * behind the C entry point) loads into an in-process world, runs, unloads, and is really
 * gone after the host's dlclose (dlopen RTLD_NOLOAD finds nothing), so it can be loaded
 * again fresh: what a reload needs. The same source built without -fno-gnu-unique stays
 * mapped, which is why docs/abi.md asks for the flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "harness.h"

#if !defined(CPP_PLUGIN_SO) || !defined(CPP_PINNED_PLUGIN_SO)
#error "tests/meson.build defines CPP_PLUGIN_SO and CPP_PINNED_PLUGIN_SO"
#endif

/* The API "test.cpp_counter" v1, as cpp_counter.cpp publishes it. */
typedef struct cpp_counter_api {
    uint32_t struct_size;
    const void *ctx;
    uint64_t (*frames)(const void *ctx);
    unsigned (*loads)(const void *ctx);
} cpp_counter_api;

/* True when the shared object at path is mapped in this process (a NOLOAD dlopen finds
 * it; the reference it takes is dropped again). */
static bool is_mapped(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL;
}

/* Load path alone into a fixture, run `frames` frames, check the API's counts. */
static void load_and_run(fixture *f, const char *path, int frames)
{
    assert_int_equal(fixture_open(f, (const char *const[]){path, NULL}), 0);
    const cpp_counter_api *api = fixture_api(f, "test.cpp_counter");
    assert_non_null(api);
    assert_int_equal(api->struct_size, sizeof *api);
    fixture_frames(f, frames);
    assert_int_equal(api->frames(api->ctx), frames);
    /* 1: the library's static data is fresh, so this is a new mapping of it */
    assert_int_equal(api->loads(api->ctx), 1);
}

static void CppPlugin_loads_runs_and_unloads_with_its_class(void **state)
{
    fixture f;
    load_and_run(&f, CPP_PLUGIN_SO, 5);
    assert_int_equal(f.w->manager_count, 1);
    assert_string_equal(f.w->managers[0]->name, "cpp_counter");
    assert_true(is_mapped(CPP_PLUGIN_SO)); /* the check below can see a mapped library */
    fixture_close(&f);                     /* unload(): the destructor logs, memory freed */
    assert_false(is_mapped(CPP_PLUGIN_SO));
}

static void CppPlugin_is_unmapped_after_unload_and_loads_again_fresh(void **state)
{
    for (int round = 0; round < 3; round++) {
        fixture f;
        load_and_run(&f, CPP_PLUGIN_SO, round + 1);
        fixture_close(&f);
        if (is_mapped(CPP_PLUGIN_SO)) fail_msg("round %d: still mapped after dlclose", round);
    }
}

/* nm -D --defined-only path lists a 'u' (STB_GNU_UNIQUE) symbol. */
static bool has_unique_symbol(const char *path)
{
    harness_output r;
    const char *const argv[] = {"nm", "-D", "--defined-only", path, NULL};
    if (harness_run(&r, 30.0, argv) != 0 || r.exit_code != 0) {
        harness_output_free(&r);
        return false;
    }
    bool unique = strstr(r.out, " u ") != NULL;
    harness_output_free(&r);
    return unique;
}

static void CppPlugin_without_no_gnu_unique_stays_mapped(void **state)
{
    if (!has_unique_symbol(CPP_PINNED_PLUGIN_SO)) { /* clang never makes unique symbols */
        print_message("# the compiler made no STB_GNU_UNIQUE symbol: nothing to show\n");
        skip();
    }
    assert_false(has_unique_symbol(CPP_PLUGIN_SO)); /* -fno-gnu-unique took effect */
    fixture f;
    load_and_run(&f, CPP_PINNED_PLUGIN_SO, 2);
    fixture_close(&f);
    /* dlclose() returned, but the unique symbol pins the library: a reload would get
     * the old code and the old static data */
    assert_true(is_mapped(CPP_PINNED_PLUGIN_SO));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(CppPlugin_loads_runs_and_unloads_with_its_class),
        cmocka_unit_test(CppPlugin_is_unmapped_after_unload_and_loads_again_fresh),
        cmocka_unit_test(CppPlugin_without_no_gnu_unique_stays_mapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
