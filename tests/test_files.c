/* SPDX-License-Identifier: MIT */
/* test_files.c: plugin files the host must refuse before anything maps them (host/
 * plugin_file.c), against the real ecs-host binary: a real plugin cut short at many
 * lengths (dlopen would die of SIGBUS), FIFOs, folders and devices named like plugins or
 * like the manifest (open would block), a file the host's user cannot read, hand-made ELF
 * files whose program headers point past their end. Each gets one line naming it and why;
 * the other plugins load and run; the host never hangs or dies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"

#if !defined(ECS_HOST_PATH) || !defined(TEST_PLUGIN_DIR) || !defined(TRANSFORM_SO)
#error "ECS_HOST_PATH, TEST_PLUGIN_DIR and TRANSFORM_SO must be defined"
#endif

typedef struct files_test {
    char *dir; /* the plugin folder: counter.so and user.so, and what a test adds */
    harness_output run;
} files_test;

static int setup(void **state)
{
    files_test *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = harness_make_tmpdir("ecs-test-files"))) return -1;
    static const char *const good[] = {"counter.so", "user.so"};
    for (int k = 0; k < 2; k++) {
        char *src = harness_join(TEST_PLUGIN_DIR, good[k]), *dst = harness_join(t->dir, good[k]);
        if (harness_copy_file(src, dst, 0755) != 0) return -1;
        free(src);
        free(dst);
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    files_test *t = *state;
    harness_output_free(&t->run);
    harness_remove_tree(t->dir);
    free(t->dir);
    free(t);
    return 0;
}

/* ecs-host [--list | --frames 3] DIR, 30 s at most (a hang fails the test). */
static void run_host(files_test *t, bool list)
{
    harness_output_free(&t->run);
    const char *argv[] = {ECS_HOST_PATH, list ? "--list" : "--frames", list ? t->dir : "3",
                          list ? NULL : t->dir, NULL};
    assert_int_equal(harness_run(&t->run, 30, argv), 0);
    if (t->run.timed_out) fail_msg("ecs-host hung: %s", t->run.err);
    if (t->run.term_signal)
        fail_msg("ecs-host died of signal %d: %s", t->run.term_signal, t->run.err);
}

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        n += strstr(line, needle) != NULL;
    }
    return n;
}

/* The host ran (exit 0), counter and user ran their frames, and exactly one line names
 * `name` (in dir) and contains `why`. */
static void expect_refused_and_others_run(files_test *t, const char *name, const char *why)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s: skipped: ", t->dir, name);
    run_host(t, false);
    if (t->run.exit_code != 0 || !strstr(t->run.err, "counter saw 3 frames"))
        fail_msg("exit %d, the others did not run: %s", t->run.exit_code, t->run.err);
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    if (count_lines_with(t->run.err, path) != 1 || !strstr(t->run.err, why))
        fail_msg("want one line naming %s with '%s': %s", path, why, t->run.err);
}

static void write_cut(const char *src, const char *dst, size_t len)
{
    size_t size = 0;
    char *bytes = harness_read_file(src, &size);
    assert_non_null(bytes);
    assert_true(len <= size);
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    chmod(dst, 0755);
    free(bytes);
}

/* A real plugin cut at 100 lengths (every header boundary and 1/64ths of the file): each
 * cut is refused with its reason at start and in --list, never mapped (no SIGBUS). */
static void Files_truncated_plugin_is_refused_at_every_length(void **state)
{
    files_test *t = *state;
    struct stat st;
    assert_int_equal(stat(TRANSFORM_SO, &st), 0);
    size_t size = (size_t)st.st_size, lens[128], n = 0;
    static const size_t fixed[] = {0,  1,   3,   4,   5,    16,   17,   63,  64,
                                   65, 120, 200, 400, 4095, 4096, 4097, 8192};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        if (fixed[k] < size) lens[n++] = fixed[k];
    for (size_t k = 1; k < 64; k++) lens[n++] = size * k / 64;
    lens[n++] = size - 1;
    char *cut = harness_join(t->dir, "x.so");
    for (size_t k = 0; k < n; k++) {
        write_cut(TRANSFORM_SO, cut, lens[k]);
        const char *why = lens[k] < 4 ? "no ELF header" : "truncated";
        if (lens[k] >= 4 && lens[k] < 64) why = "truncated: "; /* less than an ELF header */
        print_message("# cut at %zu of %zu bytes\n", lens[k], size);
        expect_refused_and_others_run(t, "x.so", why);
        if (k % 8 == 0) { /* --list as well (every 8th length: it is the same code) */
            run_host(t, true);
            assert_int_equal(t->run.exit_code, 0);
            if (!strstr(t->run.out, "x.so") || !strstr(t->run.out, why))
                fail_msg("--list: %s", t->run.out);
        }
    }
    write_cut(TRANSFORM_SO, cut, size); /* whole again: it loads */
    run_host(t, false);
    assert_int_equal(t->run.exit_code, 0);
    assert_non_null(strstr(t->run.err, "loaded transform"));
    free(cut);
}

/* A segment of a hand-made ELF file: its type and where its bytes are in the file. */
typedef struct segment {
    uint32_t type;
    uint64_t offset, filesz;
} segment;

/* Write a hand-made shared object for this machine (its class, byte order and machine
 * those of a real plugin): the ELF header, one program header per segment, zeros up to
 * `size` bytes. */
static void write_elf(const char *path, const segment *seg, int n, size_t size)
{
    ElfW(Ehdr) real, h;
    FILE *f = fopen(TRANSFORM_SO, "rb");
    assert_non_null(f);
    assert_int_equal(fread(&real, sizeof real, 1, f), 1);
    fclose(f);
    memset(&h, 0, sizeof h);
    memcpy(h.e_ident, real.e_ident, EI_NIDENT); /* magic, class, data, version, ABI */
    h.e_type = ET_DYN;
    h.e_machine = real.e_machine;
    h.e_version = EV_CURRENT;
    h.e_phoff = sizeof h;
    h.e_ehsize = sizeof h;
    h.e_phentsize = sizeof(ElfW(Phdr));
    h.e_phnum = (uint16_t)n;
    char *bytes = calloc(1, size);
    assert_non_null(bytes);
    memcpy(bytes, &h, sizeof h);
    for (int i = 0; i < n; i++) {
        ElfW(Phdr) p = {0};
        p.p_type = seg[i].type;
        p.p_flags = PF_R;
        p.p_offset = seg[i].offset;
        p.p_vaddr = p.p_paddr = seg[i].offset;
        p.p_filesz = p.p_memsz = seg[i].filesz;
        p.p_align = seg[i].type == PT_LOAD ? 4096 : 8;
        memcpy(bytes + sizeof h + (size_t)i * sizeof p, &p, sizeof p);
    }
    assert_int_equal(harness_write_file(path, "", 0755), 0); /* its mode, whatever the umask */
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(bytes);
}

/* Hand-made ELF files (not cut linker output): every program header is checked, the last
 * one too, and a segment dlopen reads is checked whatever its type, PT_DYNAMIC as well as
 * PT_LOAD: one pointing past the end of the file is refused naming it. The same file with
 * every segment inside is not refused as truncated (dlopen then says what it finds). */
static void Files_hand_made_elf_with_a_segment_past_its_end_is_refused(void **state)
{
    files_test *t = *state;
    char *path = harness_join(t->dir, "made.so");
    const segment last_out[] = {{PT_LOAD, 0, 4096},
                                {PT_NOTE, 512, 64},
                                {PT_DYNAMIC, 4096, 256},
                                {PT_LOAD, 4096, 8192}}; /* ends at 12288 */
    write_elf(path, last_out, 4, 8192);
    expect_refused_and_others_run(t, "made.so",
                                  "truncated: segment 3 ends at byte 12288, the file has 8192");
    const segment dynamic_out[] = {{PT_LOAD, 0, 8192}, {PT_DYNAMIC, 8000, 512}, {PT_NOTE, 512, 64}};
    write_elf(path, dynamic_out, 3, 8192);
    expect_refused_and_others_run(t, "made.so",
                                  "truncated: segment 1 ends at byte 8512, the file has 8192");
    const segment inside[] = {{PT_LOAD, 0, 8192}, {PT_DYNAMIC, 7680, 512}, {PT_NOTE, 512, 64}};
    write_elf(path, inside, 3, 8192);
    expect_refused_and_others_run(t, "made.so", "made.so: skipped: ");
    if (strstr(t->run.err, "truncated")) fail_msg("refused as truncated: %s", t->run.err);
    free(path);
}

/* FIFOs, a folder and (as root) a device node named like plugins, and a FIFO named like
 * the manifest: refused at once, never opened for reading (which would block). */
static void Files_fifos_folders_and_devices_are_not_opened(void **state)
{
    files_test *t = *state;
    char *fifo = harness_join(t->dir, "f.so");
    assert_int_equal(mkfifo(fifo, 0755), 0);
    expect_refused_and_others_run(t, "f.so", "not a regular file: a FIFO");
    unlink(fifo);
    assert_int_equal(mkdir(fifo, 0755), 0); /* a folder named f.so */
    run_host(t, false);
    assert_int_equal(t->run.exit_code, 0);
    assert_non_null(strstr(t->run.err, "counter saw 3 frames"));
    rmdir(fifo);
    if (geteuid() == 0) {
        assert_int_equal(mknod(fifo, S_IFCHR | 0755, makedev(1, 5)), 0); /* like /dev/zero */
        expect_refused_and_others_run(t, "f.so", "not a regular file: a character device");
        unlink(fifo);
    } else {
        print_message("# not root: no device node made\n");
    }
    free(fifo);
    char *manifest = harness_join(t->dir, "manifest.json");
    assert_int_equal(mkfifo(manifest, 0644), 0);
    run_host(t, false);
    assert_int_equal(t->run.exit_code, 1); /* the folder's manifest cannot be read */
    if (!strstr(t->run.err, "manifest.json: not a regular file: a FIFO"))
        fail_msg("stderr: %s", t->run.err);
    unlink(manifest);
    free(manifest);
}

/* A plugin the host's user may not read: the permission error, not "no ELF header". */
static void Files_unreadable_plugin_says_permission_denied(void **state)
{
    files_test *t = *state;
    if (geteuid() != 0) {
        print_message("# SKIP: needs root to run the host as another user (nobody)\n");
        skip();
    }
    assert_int_equal(chmod(t->dir, 0755), 0);
    char *p = harness_join(t->dir, "locked.so");
    assert_int_equal(harness_copy_file(TRANSFORM_SO, p, 0000), 0);
    const char *argv[] = {"setpriv",
                          "--reuid=65534",
                          "--regid=65534",
                          "--clear-groups",
                          ECS_HOST_PATH,
                          "--frames",
                          "3",
                          t->dir,
                          NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 30, argv), 0);
    assert_int_equal(t->run.exit_code, 0);
    if (!strstr(t->run.err, "locked.so: skipped: cannot open: Permission denied") ||
        strstr(t->run.err, "no ELF header"))
        fail_msg("stderr: %s", t->run.err);
    assert_non_null(strstr(t->run.err, "counter saw 3 frames"));
    free(p);
}

/* A dangling plugin symlink and (run as another user) an unreadable subfolder: one line
 * each, and --strict counts them. */
static void Files_dangling_links_and_unreadable_subfolders_are_said_and_counted(void **state)
{
    files_test *t = *state;
    char *link = harness_join(t->dir, "gone.so");
    assert_int_equal(harness_symlink("/nonexistent/gone.so", link), 0);
    expect_refused_and_others_run(t, "gone.so", "cannot open: No such file or directory");
    const char *strict[] = {ECS_HOST_PATH, "--strict", "--frames", "1", t->dir, NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 30, strict), 0);
    assert_int_equal(t->run.exit_code, 1);
    assert_non_null(strstr(t->run.err, "--strict: 1 bad plugin(s)"));
    unlink(link);
    free(link);
    if (geteuid() != 0) {
        print_message("# SKIP (rest): needs root to run the host as another user (nobody)\n");
        return;
    }
    assert_int_equal(chmod(t->dir, 0755), 0);
    char *sub = harness_join(t->dir, "sub");
    assert_int_equal(mkdir(sub, 0700), 0); /* root's: nobody cannot list it */
    const char *as_nobody[] = {"setpriv",       "--reuid=65534",
                               "--regid=65534", "--clear-groups",
                               ECS_HOST_PATH,   "--strict",
                               "--frames",      "1",
                               t->dir,          NULL};
    harness_output_free(&t->run);
    assert_int_equal(harness_run(&t->run, 30, as_nobody), 0);
    assert_int_equal(t->run.exit_code, 1);
    char want[4300];
    snprintf(want, sizeof want, "%s: skipped: cannot list this subfolder: Permission denied", sub);
    if (!strstr(t->run.err, want) || !strstr(t->run.err, "--strict: 1 bad plugin(s)"))
        fail_msg("stderr: %s", t->run.err);
    free(sub);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(Files_truncated_plugin_is_refused_at_every_length),
        T(Files_hand_made_elf_with_a_segment_past_its_end_is_refused),
        T(Files_fifos_folders_and_devices_are_not_opened),
        T(Files_unreadable_plugin_says_permission_denied),
        T(Files_dangling_links_and_unreadable_subfolders_are_said_and_counted),
    };
    return cmocka_run_group_tests_name("files", tests, NULL, NULL);
}
