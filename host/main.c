/* SPDX-License-Identifier: MIT */
/* main.c: ecs-host's entry point: parse the options, load the plugin folder, run frames,
 * unload. Every concern lives in its own module; this file only wires them. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "guard.h"
#include "inspect.h"
#include "jobs.h"
#include "log.h"
#include "perm.h"
#include "control.h"
#include "mem.h"
#include "probe.h"
#include "reload.h"
#include "scene.h"
#include "snapshot.h"
#include "watchdog.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

static volatile sig_atomic_t stop_requested; /* SIGINT/SIGTERM: watchdog.h */

/* Wait until *next (absolute, monotonic), answering the inspector's requests meanwhile,
 * then move it one period on. */
static void pace(struct timespec *next, double fps, host_inspector *in)
{
    if (fps <= 0) return;
    uint64_t period = (uint64_t)(1e9 / fps);
    uint64_t t = (uint64_t)next->tv_sec * 1000000000ull + (uint64_t)next->tv_nsec + period;
    uint64_t now = host_now_ns();
    if (t < now) t = now; /* fell behind: do not try to catch up in a burst */
    next->tv_sec = (time_t)(t / 1000000000ull);
    next->tv_nsec = (long)(t % 1000000000ull);
    if (in) {
        host_inspector_wait(in, t, &stop_requested);
        return;
    }
    while (!stop_requested &&
           clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR) {
    }
}

/* Run frames until --frames or a signal; the controls (pause, step, the loop) decide at each
 * boundary whether one runs. While paused the inspector is answered at 60 Hz. */
static void run_frames(host_session *hs, host_reloader *r, host_inspector *in, host_control *ctl,
                       const host_options *opt)
{
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    host_api_report_thread_calls(hs); /* what load() did */
    if (r) host_reloader_on_swap(r, host_control_before_swap, ctl);
    for (int64_t i = 0; !stop_requested && (opt->frames < 0 || i < opt->frames);) {
        host_control_boundary(ctl);   /* the loop: its start taken, or its end rewound */
        if (r) host_reloader_poll(r); /* frame boundary: apply pending reloads */
        host_loop_after_reloads(&ctl->loop);
        bool ran = host_control_runs(ctl); /* not paused, or a step asked for */
        if (ran) host_world_frame(hs->world), i++;
        host_api_report_thread_calls(hs);
        bool fast = opt->fps <= 0 && ran; /* frames back to back: no wait to answer in */
        if (in) host_inspector_poll(in, fast);
        if (opt->frames < 0 || i < opt->frames)
            pace(&next, fast || opt->fps > 0 ? opt->fps : 60, in);
    }
    if (r) host_reloader_on_swap(r, NULL, NULL);
    if (stop_requested)
        host_info(NULL, "stopping after %llu frames (signal)",
                  (unsigned long long)hs->world->frame.frame);
}

/* The installed folder, when it was not asked for: left out of the folders when it does
 * not exist (a detail line) or cannot be used (a warning); when it is the only folder (no
 * PLUGIN_DIR, no ECS_PLUGIN_PATH) and does not exist, true and one error line naming it. */
static bool default_dir_missing(host_options *opt)
{
    struct stat st;
    const char *installed = opt->plugin_dirs[opt->plugin_dir_count - 1];
    if (opt->no_installed || (opt->plugin_dir_count > 1 && !opt->installed_implicit)) return false;
    char why[PATH_MAX + 600];
    if (stat(installed, &st) == 0) {
        /* there, but not asked for: a folder others may write (or not a folder) is left out
         * with a warning, never the reason the session does not start */
        if (opt->installed_implicit &&
            (!S_ISDIR(st.st_mode) || host_folder_insecure("plugin folder", installed,
                                                          opt->allow_insecure, why, sizeof why))) {
            host_warn(NULL, "the installed plugin folder %s %s: left out", installed,
                      S_ISDIR(st.st_mode) ? why : "is not a folder");
            opt->plugin_dir_count--;
        }
        return false;
    }
    if (opt->installed_implicit) {
        host_detail(NULL, "the installed plugin folder %s is not there (%s): left out", installed,
                    strerror(errno));
        opt->plugin_dir_count--;
        return false;
    }
    host_error(NULL,
               "no PLUGIN_DIR given and the installed plugin folder %s cannot be used (%s): "
               "install the plugins there (meson install) or name a folder",
               installed, strerror(errno));
    return true;
}

/* The probe of new plugin code (probe.h): this very program, unless turned off. */
static host_probe_config probe_config(const host_options *opt)
{
    host_probe_config c = {NULL, (uint32_t)(opt->probe_timeout_s * 1000 + 0.5)};
    if (opt->probe_timeout_s <= 0) return c;
    if (!(c.exe = host_probe_self()))
        host_warn(NULL, "cannot find this program's own file (/proc/self/exe): new plugin code "
                        "is not tried in a child process first");
    return c;
}

/* Are a and b the same file (the same inode when both exist, else the same path once
 * symlinks and folders are resolved)? */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

/* Check what the session will write before it starts: --save and --trace are regular files
 * or nothing, in folders that exist and are writable, --trace names no file that is read
 * or written for another role, --inspect-save-dir is a folder only this user may write.
 * False after one error line (exit status 2). */
static bool outputs_usable(const host_options *opt)
{
    char resolved[PATH_MAX], why[PATH_MAX + 128];
    const struct {
        const char *path, *option;
    } out[] = {{opt->save_path, "--save"},
               {opt->trace_path, "--trace"},
               {opt->snapshot_path, "--snapshot"}};
    for (size_t k = 0; k < sizeof out / sizeof out[0]; k++) {
        if (!out[k].path) continue;
        if (host_scene_check_target(out[k].path, resolved, sizeof resolved, why, sizeof why) !=
            ECS_OK) {
            host_error(NULL, "%s %s: %s", out[k].option, out[k].path, why);
            return false;
        }
    }
    const char *other = !opt->trace_path                                                 ? NULL
                        : opt->scene_path && same_file(opt->trace_path, opt->scene_path) ? "--scene"
                        : opt->save_path && same_file(opt->trace_path, opt->save_path)   ? "--save"
                                                                                         : NULL;
    if (other) {
        host_error(NULL, "--trace %s is also the file of %s: one file, one role", opt->trace_path,
                   other);
        return false;
    }
    if (opt->inspect_save_dir &&
        !host_inspector_save_dir_ok(opt->inspect_save_dir, why, sizeof why)) {
        host_error(NULL, "--inspect-save-dir %s: %s", opt->inspect_save_dir, why);
        return false;
    }
    return true;
}

/* --scene, with its slice in the --trace file. */
static bool traced_load(host_session *hs, const char *path)
{
    uint64_t t0 = host_now_ns();
    ecs_status s = host_scene_load(hs->scene, path);
    host_world_trace_slice(hs->world, "scene load", "scene", t0, host_now_ns());
    return s == ECS_OK;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], HOST_PROBE_ARG) == 0) /* the child of probe.c */
        return host_probe_main(argc, argv);
    host_mem_policy();
    host_options opt;
    int code;
    if (host_cli_parse(argc, argv, &opt, stdout, stderr, &code) != 0) return code;
    host_log_configure(NULL, opt.log_time, opt.colour);
    host_log_set_verbosity(opt.verbosity);
    if (opt.list && opt.verbosity == 0) host_log_set_level(ECS_LOG_WARN); /* the list says it */
    char folders[2048] = "";
    for (size_t k = 0, used = 0; k < opt.plugin_dir_count && used < sizeof folders; k++)
        used += (size_t)snprintf(folders + used, sizeof folders - used, "%s%s", k ? ", " : "",
                                 opt.plugin_dirs[k]);
    host_detail(NULL, "plugins from %s, %s%s%s", folders,
                opt.watch ? (opt.poll ? "watched by polling" : "watched (inotify)") : "not watched",
                opt.safe ? ", --safe" : "", opt.no_timing ? ", --no-timing" : "");
    if (!opt.list && !outputs_usable(&opt)) return HOST_EXIT_USAGE;
    host_session *hs = host_session_new();
    if (!hs) {
        host_error(NULL, "cannot reserve memory for the entity manager");
        return HOST_EXIT_FAILURE;
    }
    code = HOST_EXIT_OK;
    hs->world->timing.time_managers = !opt.no_timing;
    hs->world->timing.time_every = opt.timing_every;
    hs->world->fixed_dt = opt.fixed_dt_ms / 1000.0;
    hs->world->seed = (uint64_t)opt.seed;
    hs->world->safe = opt.safe && host_guard_install();
    if (!hs->world->safe) host_guard_report_install(); /* a crash says where, then is a crash */
    if (!opt.list && !(hs->world->jobs = host_jobs_start(opt.threads))) /* after the guard */
        host_warn(NULL, "no memory for the job threads: plugins' jobs run inline");
    host_jobs_set_guard(hs->world->jobs, host_api_job_guard);
    hs->probe = probe_config(&opt);
    signal(SIGCHLD, SIG_DFL); /* ignored (inherited), the probe's child could not be reaped */
    host_watchdog_start(&stop_requested, hs->world->safe);
    host_load_options lo = {.allow_insecure = opt.allow_insecure, .may_be_missing = opt.from_env};
    host_reload_options ro = {opt.poll, (uint64_t)(opt.reload_quiet_ms * 1e6), 250000000u,
                              opt.allow_insecure};
    host_reloader *r = NULL;
    host_inspector *in = NULL;
    host_control ctl;
    host_control_init(&ctl, hs, opt.loop_from, opt.loop_to);
    bool missing = default_dir_missing(&opt);
    if (missing) {
        code = HOST_EXIT_FAILURE;
    } else if (opt.watch && !opt.list &&
               !(r = host_reloader_new(hs, opt.plugin_dirs, opt.plugin_dir_count, &ro))) {
        code = HOST_EXIT_FAILURE;
    } else if (opt.trace_path && host_session_trace_open(hs, opt.trace_path) != ECS_OK) {
        host_error(NULL, "%s: cannot write the trace file: %s", opt.trace_path, strerror(errno));
        code = HOST_EXIT_FAILURE;
    } else if (opt.inspect && !opt.list &&
               !(hs->inspector = in = host_inspector_new(
                     hs, &(host_inspect_config){.spec = opt.inspect,
                                                .read_only = opt.inspect_read_only,
                                                .save_file = opt.save_path,
                                                .save_dir = opt.inspect_save_dir,
                                                .hosts = opt.inspect_hosts,
                                                .host_count = opt.inspect_host_count,
                                                .control = &ctl}))) {
        code = HOST_EXIT_FAILURE; /* before loading: its log ring sees every line */
    } else if (host_load_dirs(hs, opt.plugin_dirs, opt.plugin_dir_count, &lo) != ECS_OK) {
        code = HOST_EXIT_FAILURE;
    } else if (opt.list) {
        host_print_list(hs, stdout);
    } else if (opt.scene_path && !traced_load(hs, opt.scene_path)) {
        code = HOST_EXIT_FAILURE;
    } else if (opt.restore_path && host_snapshot_load_file(hs, opt.restore_path) != ECS_OK) {
        code = HOST_EXIT_FAILURE;
    } else {
        run_frames(hs, r, in, &ctl, &opt);
        uint64_t t0 = host_now_ns();
        if (opt.save_path && host_scene_save(hs->scene, opt.save_path) != ECS_OK)
            code = HOST_EXIT_FAILURE;
        if (opt.save_path)
            host_world_trace_slice(hs->world, "scene save", "scene", t0, host_now_ns());
        if (opt.snapshot_path && host_snapshot_save_file(hs, opt.snapshot_path) != ECS_OK)
            code = HOST_EXIT_FAILURE;
    }
    host_inspector_free(in);
    hs->inspector = NULL;
    host_control_free(&ctl);
    if (opt.strict && hs->bad_plugins > 0) {
        host_error(NULL, "--strict: %d bad plugin(s)", hs->bad_plugins);
        code = HOST_EXIT_FAILURE;
    }
    if (opt.stats && !opt.list)
        host_world_print_stats(hs->world, stdout); /* managers still there */
    if (opt.stats && !opt.list) host_jobs_print_stats(hs->world->jobs, stdout);
    if (opt.stats && r) {
        unsigned done, failed;
        host_reloader_counts(r, &done, &failed);
        printf("reloads: %u done, %u refused\n", done, failed);
    }
    host_reloader_free(r);
    host_unload_all(hs);
    host_session_free(hs);
    host_probe_stop();
    host_watchdog_end();
    host_mem_shutdown();
    return code;
}
