/* SPDX-License-Identifier: MIT */
/* probe.h: new plugin code runs first in a short-lived child process, never in the host.
 *
 * Before the host maps a plugin file (at start and at every reload), host_probe_file()
 * has a child process try it. The children come from a small helper the host starts once
 * (at the first probe): the probe program itself (ecs-host) as `ecs-host --probe-helper`,
 * spawned with posix_spawn (no copy of the world). For each file the helper makes a copy
 * of itself with clone(CLONE_PARENT), so the child is the host's own, and tells the host
 * its pid. The child dlopens the file, calls its entry function, checks and reads the
 * description, dlcloses it, and reports each step on a pipe (its file descriptor 3) in a
 * strict line format:
 *
 *     ecs-probe 1            the protocol, first
 *     dlopen                 about to dlopen (constructors run)
 *     entry                  about to call ecs_plugin_entry()
 *     desc                   about to check and read the description
 *     dlclose                about to dlclose (destructors run)
 *     ok NAME MAJOR MINOR STATE_VERSION      the last line, or:
 *     fail                   dlopen failed, no entry symbol or a bad description: the
 *                            host's own checks say which (they are harmless now)
 *
 * The parent reads with a time limit (default 2 s), kills the child's process group on a
 * hang, reaps it, and turns the last step seen and the way the child ended into one line:
 * "its constructor crashed with SIGSEGV", "exit(3) while loading", "did not finish
 * loading within 2 s", ... Any other text on the pipe makes the report garbled.
 *
 * The child: stdin /dev/null, stdout to the host's stderr (so --list output stays clean),
 * stderr the host's; no other file descriptor; every signal at its default, none blocked;
 * its own process group (a Ctrl-C at the terminal reaches the host only); killed when the
 * host dies (PR_SET_PDEATHSIG) and by its own alarm shortly after the limit. The helper
 * has the same, and ends when the host closes its socket or dies.
 */
#ifndef HOST_PROBE_H
#define HOST_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_PROBE_ARG              "--probe-helper" /* argv[1] of the probe program */
#define HOST_PROBE_DEFAULT_LIMIT_MS 2000u

/* How new plugin files are probed. Zero-initialized: no probe (the unit tests' in-process
 * worlds); ecs-host sets exe to its own file. */
typedef struct host_probe_config {
    const char *exe;   /* the probe program (an ecs-host binary), NULL: no probe */
    uint32_t limit_ms; /* how long the child may take; 0: HOST_PROBE_DEFAULT_LIMIT_MS */
} host_probe_config;

/* What the child reported about a file that passed. */
typedef struct host_probe_report {
    bool described; /* "ok": it described itself (else "fail", or no probe ran) */
    char name[64];
    uint16_t abi_major, abi_minor;
    uint32_t state_version;
} host_probe_report;

/* Probe the plugin file at path in a child process. True when nothing it ran crashed,
 * exited, hung or garbled the report (rep, when not NULL, says what it described; with
 * no probe configured: true, rep->described false). False with one line in why: what
 * happened, where ("its entry function ecs_plugin_entry() crashed with SIGSEGV"), or that
 * the probe program could not run. Blocks for at most the limit (plus reaping). */
bool host_probe_file(const host_probe_config *cfg, const char *path, host_probe_report *rep,
                     char *why, size_t len);

/* The probe program: `ecs-host --probe-helper`, called first thing in main() (nothing of
 * the host is set up). Returns the exit status (2: bad arguments); normally it ends the
 * process itself. */
int host_probe_main(int argc, char **argv);

/* End the helper, if one runs (at exit; the next probe starts a new one). */
void host_probe_stop(void);

/* This program's own file, for host_probe_config.exe: /proc/self/exe resolved (under
 * valgrind, the client's file). NULL when it cannot be found or was deleted. */
const char *host_probe_self(void);

#endif
