/* SPDX-License-Identifier: MIT */
/* cli.h: ecs-host's command line: parsed once into host_options, errors as exit code 2. */
#ifndef HOST_CLI_H
#define HOST_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define HOST_EXIT_OK      0
#define HOST_EXIT_FAILURE 1
#define HOST_EXIT_USAGE   2

#define HOST_MAX_PLUGIN_DIRS 32

#define HOST_MAX_INSPECT_HOSTS 16 /* --inspect-host names */

#define HOST_MAX_THREADS 64 /* --threads: HOST_JOBS_MAX_THREADS (jobs.h) */

typedef struct host_options {
    const char *plugin_dir; /* the first of plugin_dirs (messages that name one) */
    const char *plugin_dirs[HOST_MAX_PLUGIN_DIRS]; /* PLUGIN_DIR..., then ECS_PLUGIN_PATH's,
                                    then the installed folder (unless --no-installed-plugins) */
    char env_path[8192];                           /* ECS_PLUGIN_PATH, cut at its colons */
    bool from_env[HOST_MAX_PLUGIN_DIRS]; /* plugin_dirs[k] is ECS_PLUGIN_PATH's: passed over
                                            when it does not exist, as PATH's entries are */
    size_t plugin_dir_count;
    bool installed_implicit; /* the last of them is the installed folder, not asked for:
                                skipped when it does not exist (unless it is the only one) */
    bool no_installed;       /* --no-installed-plugins */
    int64_t frames;          /* -1: until SIGINT/SIGTERM */
    double fps;              /* 0: as fast as possible */
    bool stats, list, strict, allow_insecure, no_timing;
    uint32_t timing_every; /* --timing-every: time the updates on one frame in this many */
    uint32_t threads;      /* --threads: job threads in all; 0: the CPUs we may use */
    const char *trace_path;
    const char *scene_path; /* --scene: load it after the plugins */
    const char *save_path;  /* --save: write the world there at exit */
    bool watch, poll;       /* hot reload; polling instead of inotify */
    bool safe;              /* catch crashes in plugin code */
    double reload_quiet_ms; /* quiet period before a changed file is used */
    int verbosity;          /* -1 -q (errors), 0 default (info), 1 -v (detail), 2 -vv (debug) */
    bool log_time;          /* --log-time: milliseconds since start on every line */
    int colour;             /* --color: 1 always, 0 never, -1 auto (a terminal, no NO_COLOR) */
    double probe_timeout_s; /* limit of the child-process probe of new code; 0: no probe */
    const char *inspect;    /* --inspect [ADDR:]PORT: serve the inspector page and API */
    bool inspect_read_only; /* --inspect-read-only: every write answers 403 */
    const char *inspect_save_dir; /* --inspect-save-dir: the page's saves by name go here */
    const char *inspect_hosts[HOST_MAX_INSPECT_HOSTS]; /* --inspect-host NAME, each */
    size_t inspect_host_count;
    const char *snapshot_path;  /* --snapshot: write a snapshot there at exit */
    const char *restore_path;   /* --restore: start from this snapshot */
    int64_t loop_from, loop_to; /* --loop A:B; loop_from -1: no loop */
    double fixed_dt_ms;         /* --fixed-dt; 0: dt from the clock */
    int64_t seed;               /* --seed */
    bool help, version;
} host_options;

/* Parse argv into *opt. Returns -1 when the program should exit with `*exit_code` (help,
 * version, or a usage error already reported on err), 0 to run. */
int host_cli_parse(int argc, char **argv, host_options *opt, FILE *out, FILE *err, int *exit_code);

#endif
