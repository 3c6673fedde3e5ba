/* SPDX-License-Identifier: MIT */
/* cli.c: ecs-host's options (getopt_long) with defaults in one place (cli.h). Without a
 * PLUGIN_DIR argument the installed plugin folder is used (ECS_DEFAULT_PLUGIN_DIR, set by
 * host/meson.build from the install prefix). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_plugin.h"
#include "timing.h"

#ifndef ECS_HOST_VERSION
#define ECS_HOST_VERSION "0.0.0"
#endif
#ifndef ECS_DEFAULT_PLUGIN_DIR
#error "host/meson.build defines ECS_DEFAULT_PLUGIN_DIR (prefix/libdir/ecs-host/plugins)"
#endif
#ifndef ECS_DOC_DIR
#error "host/meson.build defines ECS_DOC_DIR (where the guides are installed)"
#endif

static const char usage[] =
    "usage: ecs-host [options] [PLUGIN_DIR...]\n"
    "\n"
    "Load every plugin (*.so) in each PLUGIN_DIR and in its subfolders one level down,\n"
    "then update their component managers every frame in registration order. Folders:\n"
    "the PLUGIN_DIRs, then those of ECS_PLUGIN_PATH (colon-separated), then the\n"
    "installed plugin folder, " ECS_DEFAULT_PLUGIN_DIR "\n"
    "(unless --no-installed-plugins); a plugin name found in an earlier folder wins.\n"
    "\n"
    "options:\n"
    "  --scene FILE               load a scene (.json, or glTF .gltf/.glb) after the plugins\n"
    "  --save FILE                save the world to FILE at exit (after the last frame or\n"
    "                             SIGINT/SIGTERM); --frames 0 --scene A --save B converts\n"
    ""; /* two strings: C11 compilers need only take 4095 characters in one */
static const char usage_more[] =
    "  --snapshot FILE            write a snapshot of the whole world to FILE at exit\n"
    "                             (binary; --frames 100 --snapshot F: after frame 100)\n"
    "  --restore FILE             start from a snapshot instead of a scene; frame numbers\n"
    "                             go on from the snapshot's\n"
    "  --loop A:B                 the live loop: snapshot after frame A, run to frame B,\n"
    "                             restore, again, until stopped; a reload during the loop\n"
    "                             replays frames A-B with the new code\n"
    "  --fixed-dt MS              every frame's dt is MS milliseconds (deterministic runs)\n"
    "  --seed N                   the session's random seed (frame seeds derive from it;\n"
    "                             a snapshot keeps it); default 0\n"
    "  --watch                    hot reload: load new builds of plugins as they appear,\n"
    "                             keeping every component (see README, Hot reload)\n"
    "  --poll                     with --watch: scan the folder instead of using inotify\n"
    "  --safe                     catch a crash in plugin code (SIGSEGV, SIGBUS, SIGFPE,\n"
    "                             SIGILL, abort): keep the old build, or unload the plugin\n"
    "                             (a second SIGINT/SIGTERM abandons a call that hangs)\n"
    "  --reload-quiet MS          with --watch: wait MS after a file's last change (50)\n"
    "  --probe-timeout S          new plugin code runs first in a child process, which\n"
    "                             must finish within S seconds (2; 0: no child process)\n"
    "  --threads N                threads for plugins' jobs, main included (1-64; the\n"
    "                             CPUs we may use; 1: jobs run inline)\n"
    "  --frames N                 run N frames, then exit (0: load, unload and exit);\n"
    "                             default: run until SIGINT or SIGTERM\n"
    "  --fps HZ                   frames per second (0: as fast as possible; default 60)\n"
    "  --inspect [ADDR:]PORT      serve a live page of the world and a JSON API at\n"
    "                             http://127.0.0.1:PORT/ (0: a free port); the log names\n"
    "                             the URL with its access token (docs/inspector.md)\n"
    "  --inspect-read-only        the inspector shows, never changes, the world\n"
    "  --inspect-save-dir DIR     the page may save the world into DIR, under a name it\n"
    "                             gives (else only to the --save FILE)\n"
    "  --inspect-host NAME        let requests name the server NAME in their Host header\n"
    "                             (a name of this machine, for --inspect ADDR:PORT)\n"
    "  --stats                    print each manager's update time at exit\n"
    "  --trace FILE               write a Chrome trace-event JSON file (Perfetto opens it)\n"
    "  --timing-every N           time each manager's update on one frame in N (8; 1:\n"
    "                             every frame, at about 10 ns per manager per frame)\n"
    "  --no-timing                do not time the managers' updates (--stats then shows\n"
    "                             frame times only)\n"
    "  --list                     list the plugins found and whether they load, then exit\n"
    "  --strict                   exit 1 when any plugin is bad (default: skip it)\n"
    "  --allow-insecure-plugins   load plugins that other users may write (warns)\n"
    "  --no-installed-plugins     leave the installed plugin folder out\n"
    "  -q, --quiet                log errors only\n"
    "  -v, --verbose              also the host's detail lines (what it decided and why);\n"
    "                             -vv: also debug lines (plugins' too). Default: errors,\n"
    "                             warnings and info\n"
    "  --log-time                 start every log line with the milliseconds since start\n"
    "  --color WHEN               colour the log's levels: auto (a terminal, and NO_COLOR\n"
    "                             not set; the default), always, never\n"
    "  -h, --help                 this text\n"
    "  --version                  print the host and ABI versions\n"
    "\n"
    "exit status: 0 ok, 1 runtime failure, 2 usage error\n"
    "\n"
    "README.md, the guides (writing-a-plugin.md, abi.md, scene-format.md, inspector.md),\n"
    "the plugin template and a C++ plugin are installed in " ECS_DOC_DIR "\n";

enum {
    OPT_FRAMES = 256,
    OPT_FPS,
    OPT_NO_TIMING,
    OPT_TIMING_EVERY,
    OPT_SCENE,
    OPT_WATCH,
    OPT_POLL,
    OPT_SAFE,
    OPT_QUIET,
    OPT_PROBE_TIMEOUT,
    OPT_SAVE,
    OPT_STATS,
    OPT_TRACE,
    OPT_LIST,
    OPT_STRICT,
    OPT_INSECURE,
    OPT_VERSION,
    OPT_LOG_TIME,
    OPT_COLOR,
    OPT_INSPECT,
    OPT_INSPECT_RO,
    OPT_INSPECT_SAVE_DIR,
    OPT_INSPECT_HOST,
    OPT_NO_INSTALLED,
    OPT_SNAPSHOT,
    OPT_RESTORE,
    OPT_LOOP,
    OPT_FIXED_DT,
    OPT_SEED,
    OPT_THREADS
};

static const struct option long_options[] = {
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"fps", required_argument, NULL, OPT_FPS},
    {"stats", no_argument, NULL, OPT_STATS},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"list", no_argument, NULL, OPT_LIST},
    {"no-timing", no_argument, NULL, OPT_NO_TIMING},
    {"timing-every", required_argument, NULL, OPT_TIMING_EVERY},
    {"scene", required_argument, NULL, OPT_SCENE},
    {"watch", no_argument, NULL, OPT_WATCH},
    {"poll", no_argument, NULL, OPT_POLL},
    {"safe", no_argument, NULL, OPT_SAFE},
    {"reload-quiet", required_argument, NULL, OPT_QUIET},
    {"probe-timeout", required_argument, NULL, OPT_PROBE_TIMEOUT},
    {"save", required_argument, NULL, OPT_SAVE},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"allow-insecure-plugins", no_argument, NULL, OPT_INSECURE},
    {"verbose", no_argument, NULL, 'v'},
    {"log-time", no_argument, NULL, OPT_LOG_TIME},
    {"color", required_argument, NULL, OPT_COLOR},
    {"quiet", no_argument, NULL, 'q'},
    {"inspect", required_argument, NULL, OPT_INSPECT},
    {"inspect-read-only", no_argument, NULL, OPT_INSPECT_RO},
    {"inspect-save-dir", required_argument, NULL, OPT_INSPECT_SAVE_DIR},
    {"inspect-host", required_argument, NULL, OPT_INSPECT_HOST},
    {"no-installed-plugins", no_argument, NULL, OPT_NO_INSTALLED},
    {"snapshot", required_argument, NULL, OPT_SNAPSHOT},
    {"restore", required_argument, NULL, OPT_RESTORE},
    {"loop", required_argument, NULL, OPT_LOOP},
    {"fixed-dt", required_argument, NULL, OPT_FIXED_DT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* A whole number in [0, 2^62] (digits only); -1 when s is not one. */
static int64_t parse_count(const char *s)
{
    if (!isdigit((unsigned char)s[0])) return -1; /* strtoll would take " 5" and "+5" */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > (1ll << 62)) return -1;
    return v;
}

static double parse_rate(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e6) return -1;
    return v;
}

static int fail(FILE *err, int *code, const char *fmt, const char *arg)
{
    fprintf(err, "ecs-host: ");
    fprintf(err, fmt, arg);
    fprintf(err, "\nTry 'ecs-host --help'.\n");
    *code = HOST_EXIT_USAGE;
    return -1;
}

/* --loop A:B into *a, *b: whole numbers with A < B; false when s is not that. */
static bool parse_loop(const char *s, int64_t *a, int64_t *b)
{
    char first[32];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof first) return false;
    memcpy(first, s, (size_t)(colon - s));
    first[colon - s] = '\0';
    *a = parse_count(first), *b = parse_count(colon + 1);
    return *a >= 0 && *b > *a;
}

/* The options of snapshots and deterministic frames (a case of host_cli_parse's switch):
 * 0, or -1 after a usage error. */
static int parse_snapshot_option(int c, host_options *opt, FILE *err, int *exit_code)
{
    switch (c) {
    case OPT_SNAPSHOT:
        opt->snapshot_path = optarg;
        return 0;
    case OPT_RESTORE:
        opt->restore_path = optarg;
        return 0;
    case OPT_LOOP:
        if (!parse_loop(optarg, &opt->loop_from, &opt->loop_to))
            return fail(err, exit_code, "--loop needs A:B, whole numbers with A < B, not '%s'",
                        optarg);
        return 0;
    case OPT_FIXED_DT:
        if ((opt->fixed_dt_ms = parse_rate(optarg)) <= 0)
            return fail(err, exit_code,
                        "--fixed-dt needs milliseconds above 0 (up to 1e6), not '%s'", optarg);
        return 0;
    default: /* OPT_SEED */
        if ((opt->seed = parse_count(optarg)) < 0)
            return fail(err, exit_code, "--seed needs a whole number >= 0, not '%s'", optarg);
        return 0;
    }
}

#define STR_(x)       #x
#define STR(x)        STR_(x)
#define MAX_DIRS_TEXT STR(HOST_MAX_PLUGIN_DIRS)

int host_cli_parse(int argc, char **argv, host_options *opt, FILE *out, FILE *err, int *exit_code)
{
    *opt = (host_options){.frames = -1,
                          .loop_from = -1,
                          .fps = 60.0,
                          .timing_every = HOST_TIME_EVERY,
                          .reload_quiet_ms = 50.0,
                          .colour = -1,
                          .probe_timeout_s = 2.0};
    *exit_code = HOST_EXIT_OK;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":vqh", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_FRAMES:
            if ((opt->frames = parse_count(optarg)) < 0)
                return fail(err, exit_code, "--frames needs a whole number >= 0, not '%s'", optarg);
            break;
        case OPT_FPS:
            if ((opt->fps = parse_rate(optarg)) < 0)
                return fail(err, exit_code, "--fps needs a number from 0 to 1e6, not '%s'", optarg);
            break;
        case OPT_STATS:
            opt->stats = true;
            break;
        case OPT_TRACE:
            opt->trace_path = optarg;
            break;
        case OPT_LIST:
            opt->list = true;
            break;
        case OPT_WATCH:
            opt->watch = true;
            break;
        case OPT_SAFE:
            opt->safe = true;
            break;
        case OPT_INSPECT:
            opt->inspect = optarg;
            break;
        case OPT_INSPECT_RO:
            opt->inspect_read_only = true;
            break;
        case OPT_INSPECT_SAVE_DIR:
            opt->inspect_save_dir = optarg;
            break;
        case OPT_INSPECT_HOST:
            if (opt->inspect_host_count == HOST_MAX_INSPECT_HOSTS)
                return fail(err, exit_code, "--inspect-host %s: at most 16 names", optarg);
            opt->inspect_hosts[opt->inspect_host_count++] = optarg;
            break;
        case OPT_NO_INSTALLED:
            opt->no_installed = true;
            break;
        case OPT_POLL:
            opt->poll = true;
            break;
        case OPT_QUIET:
            if ((opt->reload_quiet_ms = parse_rate(optarg)) < 0)
                return fail(err, exit_code,
                            "--reload-quiet needs milliseconds from 0 to 1e6, not '%s'", optarg);
            break;
        case OPT_PROBE_TIMEOUT:
            if ((opt->probe_timeout_s = parse_rate(optarg)) < 0 || opt->probe_timeout_s > 3600 ||
                (opt->probe_timeout_s > 0 && opt->probe_timeout_s < 0.001))
                return fail(err, exit_code,
                            "--probe-timeout needs seconds from 0.001 to 3600, or 0, not '%s'",
                            optarg);
            break;
        case OPT_SCENE:
            opt->scene_path = optarg;
            break;
        case OPT_SAVE:
            opt->save_path = optarg;
            break;
        case OPT_NO_TIMING:
            opt->no_timing = true;
            break;
        case OPT_TIMING_EVERY: {
            int64_t n = parse_count(optarg);
            if (n < 1 || n > 1000000)
                return fail(err, exit_code,
                            "--timing-every needs a whole number from 1 to 1000000, not '%s'",
                            optarg);
            opt->timing_every = (uint32_t)n;
            break;
        }
        case OPT_STRICT:
            opt->strict = true;
            break;
        case OPT_THREADS: {
            int64_t n = parse_count(optarg);
            if (n < 1 || n > HOST_MAX_THREADS)
                return fail(err, exit_code, "--threads needs a whole number from 1 to 64, not '%s'",
                            optarg);
            opt->threads = (uint32_t)n;
            break;
        }
        case OPT_INSECURE:
            opt->allow_insecure = true;
            break;
        case 'v':
            if (opt->verbosity < 2) opt->verbosity++;
            break;
        case OPT_LOG_TIME:
            opt->log_time = true;
            break;
        case OPT_COLOR:
            opt->colour = !strcmp(optarg, "always") ? 1 : !strcmp(optarg, "never") ? 0 : -1;
            if (opt->colour < 0 && strcmp(optarg, "auto") != 0)
                return fail(err, exit_code, "--color takes auto, always or never, not '%s'",
                            optarg);
            break;
        case 'q':
            opt->verbosity = -1;
            break;
        case OPT_SNAPSHOT:
        case OPT_RESTORE:
        case OPT_LOOP:
        case OPT_FIXED_DT:
        case OPT_SEED:
            if (parse_snapshot_option(c, opt, err, exit_code) != 0) return -1;
            break;
        case 'h':
            fputs(usage, out);
            fputs(usage_more, out);
            return -1;
        case OPT_VERSION:
            fprintf(out, "ecs-host %s (plugin ABI %d.%d)\n", ECS_HOST_VERSION, ECS_ABI_MAJOR,
                    ECS_ABI_MINOR);
            return -1;
        case ':':
            return fail(err, exit_code, "option '%s' needs a value", argv[optind - 1]);
        default:
            return fail(err, exit_code, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (opt->restore_path && opt->scene_path)
        return fail(err, exit_code, "%s",
                    "--restore and --scene both say where the world comes from: give one");
    /* the folders: the command line's, ECS_PLUGIN_PATH's (colon-separated), the installed */
    size_t n = 0;
    for (int i = optind; i < argc; i++) {
        if (n == HOST_MAX_PLUGIN_DIRS)
            return fail(err, exit_code, "at most %s plugin folders", MAX_DIRS_TEXT);
        opt->plugin_dirs[n++] = argv[i];
    }
    const char *env = getenv("ECS_PLUGIN_PATH");
    if (env && strlen(env) >= sizeof opt->env_path)
        return fail(err, exit_code, "%s", "ECS_PLUGIN_PATH is too long (over 8 KiB)");
    snprintf(opt->env_path, sizeof opt->env_path, "%s", env ? env : "");
    for (char *p = opt->env_path, *next; p && *p; p = next) {
        next = strchr(p, ':');
        if (next) *next++ = '\0';
        if (!*p) continue; /* "a::b", a leading or trailing colon: nothing */
        if (n == HOST_MAX_PLUGIN_DIRS)
            return fail(err, exit_code, "at most %s plugin folders", MAX_DIRS_TEXT);
        opt->from_env[n] = true;
        opt->plugin_dirs[n++] = p;
    }
    if (!opt->no_installed) {
        if (n == HOST_MAX_PLUGIN_DIRS)
            return fail(err, exit_code, "at most %s plugin folders", MAX_DIRS_TEXT);
        opt->installed_implicit = n > 0;
        opt->plugin_dirs[n++] = ECS_DEFAULT_PLUGIN_DIR;
    }
    if (n == 0)
        return fail(err, exit_code, "%s",
                    "no plugin folder: --no-installed-plugins needs a PLUGIN_DIR or "
                    "ECS_PLUGIN_PATH");
    opt->plugin_dir_count = n;
    opt->plugin_dir = opt->plugin_dirs[0];
    return 0;
}
