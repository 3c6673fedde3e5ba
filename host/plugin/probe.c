/* SPDX-License-Identifier: MIT */
/* probe.c: new plugin code runs first in a short-lived child process (probe.h).
 *
 * The helper: `ecs-host --probe-helper`, spawned once (at the first probe) with a socket
 * to the host as its fd 3; for each request (a file, a time limit and the write end of a
 * report pipe) it makes the child with clone(CLONE_PARENT), so the child is the host's
 * own (the host reaps it and kills it as any child of its), and answers the child's pid.
 * A copy of the small helper costs a fraction of a millisecond; spawning ecs-host anew
 * for each file cost the loading of every library it links (several ms). A helper that
 * died is started again at the next request.
 * Parent: ask the helper for a child reporting on a new pipe -> read its report line by
 * line (a small state machine: the step it is at, or garbled) until its last line, its
 * end, or the time limit -> kill its process group when needed and reap it -> one line
 * from (step, how it ended). Child: one step after the other, each announced before it
 * runs, so the last step on the pipe is the one that misbehaved.
 */
#include "probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "plugin_desc.h"
#include "world.h"

extern char **environ;

#define REPORT_FD     3 /* the child's end of the report pipe; the helper's socket */
#define PROTOCOL_LINE "ecs-probe 1"
#define MAX_LINE      160  /* the longest line the protocol has: "ok" + 63 + numbers */
#define MAX_DEPS_READ 4096 /* dependency names the child touches before giving up */
#define WAIT_SLICE_MS 20   /* how often the parent looks whether the child ended */
#define ENTRY_FN      ECS_PLUGIN_ENTRY_NAME "()"

/* The steps of the child, in order; each is announced before it runs. */
typedef enum probe_step {
    STEP_NONE,    /* nothing read yet: the program did not start (or is not a probe) */
    STEP_STARTED, /* PROTOCOL_LINE */
    STEP_DLOPEN,
    STEP_ENTRY,
    STEP_DESC,
    STEP_DLCLOSE,
    STEP_DONE /* the last line ("ok ..." or "fail") was read */
} probe_step;

static const char *const step_lines[] = {NULL, PROTOCOL_LINE, "dlopen", "entry", "desc", "dlclose"};

/* ---- the child ---- */

static void say(const char *text)
{
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t put = write(REPORT_FD, text, n);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) _exit(EXIT_FAILURE); /* the host is gone or closed the pipe */
        text += put;
        n -= (size_t)put;
    }
}

/* The last line, then the end: no destructor or atexit handler of the host runs. */
_Noreturn static void finish(const char *line)
{
    say(line);
    _exit(EXIT_SUCCESS);
}

/* What every child starts with beside what it has from the helper (which was spawned
 * with every signal at its default and none blocked): killed when the host dies (false:
 * the host is gone already), its own process group (a Ctrl-C at the terminal reaches the
 * host only), the crash signals at their defaults (a crash ends it by its signal, whatever
 * handlers a sanitizer runtime put there), and its own alarm shortly after the limit,
 * should the host not kill it. */
static bool child_ready(pid_t host, unsigned long limit_ms)
{
    static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGALRM};
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != host) return false;
    setpgid(0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof crash / sizeof *crash; i++) sigaction(crash[i], &sa, NULL);
    alarm((unsigned)(limit_ms / 1000 + 2));
    return true;
}

/* Read every string of d (a bad pointer crashes here, in the child). */
static void touch_strings(const ecs_plugin_desc *d)
{
    volatile size_t sum = d->version ? strlen(d->version) : 0;
    for (size_t i = 0; d->dependencies && i < MAX_DEPS_READ && d->dependencies[i]; i++)
        sum += strlen(d->dependencies[i]);
    (void)sum;
}

/* The child's steps on the file at path, reported on REPORT_FD. Never returns. */
_Noreturn static void probe_steps(const char *path)
{
    say(PROTOCOL_LINE "\n");
    say("dlopen\n");
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    union {
        void *obj;
        ecs_plugin_entry_fn fn;
    } entry = {dl ? dlsym(dl, ECS_PLUGIN_ENTRY_NAME) : NULL};
    if (!entry.obj) finish("fail\n");
    say("entry\n");
    const ecs_plugin_desc *d = entry.fn();
    say("desc\n");
    char why[400], last[MAX_LINE];
    if (!host_plugin_desc_ok(d, why, sizeof why)) finish("fail\n");
    touch_strings(d);
    snprintf(last, sizeof last, "ok %s %u %u %u\n", d->name, (unsigned)d->abi_major,
             (unsigned)d->abi_minor, (unsigned)d->state_version);
    say("dlclose\n");
    dlclose(dl);
    finish(last);
}

/* ---- the helper ---- */

/* A request to the helper: the time limit, then the file's path (NUL-terminated); the
 * report pipe's write end travels beside it (SCM_RIGHTS). The answer: the child's pid,
 * or minus an errno. */
typedef struct helper_request {
    uint32_t limit_ms;
    char path[PATH_MAX];
} helper_request;

typedef union fd_control {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
} fd_control;

/* The next request on the socket (fd 3) into *q and *fd; false when the host closed it
 * (or is gone). What is not a request is answered with -EINVAL and passed over. */
static bool next_request(helper_request *q, int *fd)
{
    for (;;) {
        fd_control control;
        struct iovec io = {q, sizeof *q};
        struct msghdr m = {.msg_iov = &io,
                           .msg_iovlen = 1,
                           .msg_control = control.buf,
                           .msg_controllen = sizeof control.buf};
        ssize_t n = recvmsg(REPORT_FD, &m, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        bool has_fd = c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                      c->cmsg_len == CMSG_LEN(sizeof(int));
        if (has_fd) memcpy(fd, CMSG_DATA(c), sizeof *fd);
        size_t path_len = (size_t)n > sizeof q->limit_ms ? (size_t)n - sizeof q->limit_ms : 0;
        if (has_fd && path_len && memchr(q->path, 0, path_len)) return true;
        if (has_fd) close(*fd);
        int32_t refused = -EINVAL;
        if (send(REPORT_FD, &refused, sizeof refused, MSG_NOSIGNAL) < 0) return false;
    }
}

/* The helper: a child per request, made with CLONE_PARENT (the host's child, not the
 * helper's), its pid sent back. Ends when the host closes the socket or dies. */
static int helper_main(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pid_t host = getppid();
    helper_request q;
    int fd;
    while (next_request(&q, &fd)) {
        pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) { /* the child: the report pipe as fd 3, nothing else open */
            if (dup2(fd, REPORT_FD) != REPORT_FD || !child_ready(host, q.limit_ms))
                _exit(EXIT_FAILURE);
            closefrom(REPORT_FD + 1);
            probe_steps(q.path);
        }
        int32_t answer = pid > 0 ? (int32_t)pid : -errno;
        close(fd);
        if (send(REPORT_FD, &answer, sizeof answer, MSG_NOSIGNAL) < 0) break;
    }
    _exit(EXIT_SUCCESS); /* no destructor or sanitizer report of the host's */
}

int host_probe_main(int argc, char **argv)
{
    (void)argv;
    if (argc != 2) {
        fprintf(stderr, "ecs-host: %s is for ecs-host's own use\n", HOST_PROBE_ARG);
        return 2;
    }
    return helper_main();
}

/* ---- the parent: reading the report ---- */

typedef struct probe_reading {
    probe_step step;
    bool garbled;
    char bad[48]; /* the start of the first line that does not fit */
    char line[MAX_LINE + 1];
    size_t len; /* of the line being read */
    host_probe_report rep;
} probe_reading;

/* A whole number of at most max from the digits of s; false when s is not one. */
static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (*s < '0' || *s > '9') return false;
    errno = 0;
    *out = strtoul(s, &end, 10);
    return !errno && !*end && *out <= max;
}

/* "ok NAME MAJOR MINOR STATE" into r->rep; false when it is anything else. */
static bool parse_ok(probe_reading *r, char *line)
{
    char *field[5], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save))
        field[n++] = t;
    unsigned long major, minor, state;
    size_t name_len = n == 5 ? strlen(field[1]) : 0;
    if (n != 5 || strtok_r(NULL, " ", &save) || strcmp(field[0], "ok") != 0 || name_len == 0 ||
        name_len >= sizeof r->rep.name ||
        strspn(field[1], "abcdefghijklmnopqrstuvwxyz0123456789_") != name_len ||
        !parse_uint(field[2], UINT16_MAX, &major) || !parse_uint(field[3], UINT16_MAX, &minor) ||
        !parse_uint(field[4], UINT32_MAX, &state))
        return false;
    memcpy(r->rep.name, field[1], name_len + 1);
    r->rep.abi_major = (uint16_t)major;
    r->rep.abi_minor = (uint16_t)minor;
    r->rep.state_version = (uint32_t)state;
    r->rep.described = true;
    return true;
}

/* One whole line (no newline): the next step, the last line, or garbage. */
static void take_line(probe_reading *r)
{
    char copy[sizeof r->bad];
    size_t n = strnlen(r->line, sizeof copy - 1); /* parse_ok() cuts the line up */
    memcpy(copy, r->line, n);
    copy[n] = '\0';
    bool can_fail = r->step == STEP_DLOPEN || r->step == STEP_DESC;
    if (r->step < STEP_DLCLOSE && strcmp(r->line, step_lines[r->step + 1]) == 0)
        r->step++;
    else if (can_fail && strcmp(r->line, "fail") == 0)
        r->step = STEP_DONE;
    else if (r->step == STEP_DLCLOSE && parse_ok(r, r->line))
        r->step = STEP_DONE;
    else {
        r->garbled = true;
        memcpy(r->bad, copy, sizeof r->bad);
    }
}

static void feed(probe_reading *r, const char *data, size_t n)
{
    for (size_t i = 0; i < n && !r->garbled && r->step != STEP_DONE; i++) {
        if (data[i] != '\n' && r->len < MAX_LINE) {
            r->line[r->len++] = data[i];
            continue;
        }
        r->line[r->len] = '\0';
        r->len = 0;
        take_line(r);
        if (data[i] != '\n') r->garbled = true; /* too long for the protocol */
    }
}

/* ---- the parent: the child process ---- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The helper this process talks to (one per process; the host's main thread only). */
static struct {
    pid_t pid; /* 0: none */
    int sock;
    char exe[PATH_MAX];
} helper = {0, -1, ""};

/* Start `exe --probe-helper` with one end of a new socket as its fd 3, /dev/null as its
 * stdin, the host's stderr as its stdout and stderr, nothing else open, every signal at
 * its default, its own process group. 0 or an errno. */
static int helper_start(const char *exe)
{
    int sv[2];
    if (strlen(exe) >= sizeof helper.exe) return ENAMETOOLONG;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return errno;
    char *const argv[] = {(char *)exe, HOST_PROBE_ARG, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, every;
    sigemptyset(&none);
    sigfillset(&every); /* the host, or whoever started it, may ignore any */
    int rc = posix_spawn_file_actions_init(&fa);
    if (!rc && (rc = posix_spawnattr_init(&at))) posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        close(sv[0]), close(sv[1]);
        return rc;
    }
    pid_t pid = 0;
    if (!(rc = posix_spawn_file_actions_adddup2(&fa, sv[1], REPORT_FD)) &&
        !(rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
        !(rc = posix_spawn_file_actions_adddup2(&fa, 2, 1)) && /* plugin output: the log */
        !(rc = posix_spawn_file_actions_addclosefrom_np(&fa, REPORT_FD + 1)) &&
        !(rc = posix_spawnattr_setsigmask(&at, &none)) &&
        !(rc = posix_spawnattr_setsigdefault(&at, &every)) &&
        !(rc = posix_spawnattr_setpgroup(&at, 0)) &&
        !(rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                 POSIX_SPAWN_SETPGROUP)))
        rc = posix_spawn(&pid, exe, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    if (rc) {
        close(sv[0]);
        return rc;
    }
    helper.pid = pid;
    helper.sock = sv[0];
    strcpy(helper.exe, exe);
    return 0;
}

void host_probe_stop(void)
{
    if (!helper.pid) return;
    close(helper.sock); /* it ends when it sees the socket closed; kill makes sure */
    kill(helper.pid, SIGKILL);
    while (waitpid(helper.pid, NULL, 0) < 0 && errno == EINTR) {
    }
    helper.pid = 0;
    helper.sock = -1;
}

/* Ask the helper for a child probing path within limit_ms and reporting on report_fd.
 * 0 and *pid, or an errno (then the helper is not to be trusted: EPIPE when it is gone). */
static int helper_child(const char *path, uint32_t limit_ms, int report_fd, pid_t *pid)
{
    helper_request q = {limit_ms, ""};
    size_t n = strlen(path);
    if (n >= sizeof q.path) return ENAMETOOLONG;
    memcpy(q.path, path, n + 1);
    fd_control control;
    memset(&control, 0, sizeof control);
    struct iovec io = {&q, sizeof q.limit_ms + n + 1};
    struct msghdr m = {.msg_iov = &io,
                       .msg_iovlen = 1,
                       .msg_control = control.buf,
                       .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &report_fd, sizeof report_fd);
    if (sendmsg(helper.sock, &m, MSG_NOSIGNAL) < 0) return errno;
    struct pollfd pf = {helper.sock, POLLIN, 0};
    int32_t answer = 0;
    int ready = poll(&pf, 1, (int)limit_ms); /* at once, unless it is gone or stuck */
    ssize_t got = ready > 0 ? recv(helper.sock, &answer, sizeof answer, 0) : -1;
    if (got != (ssize_t)sizeof answer) return ready == 0 ? ETIMEDOUT : EPIPE;
    if (answer <= 0) return answer < 0 ? -answer : EPROTO;
    *pid = (pid_t)answer;
    return 0;
}

/* A child of this process probing path (through the helper, started, or started again
 * once when it is gone), reporting on report_fd. 0 or an errno. */
static int spawn_probe(const char *exe, const char *path, uint32_t limit_ms, int report_fd,
                       pid_t *pid)
{
    if (helper.pid && strcmp(helper.exe, exe) != 0) host_probe_stop();
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!helper.pid && (rc = helper_start(exe))) return rc;
        if (!(rc = helper_child(path, limit_ms, report_fd, pid))) return 0;
        host_probe_stop();
    }
    return rc;
}

/* Read the report until its last line, garbage, the child's end (*status) or the
 * deadline. Returns true when the child was reaped into *status. */
static bool read_report(int fd, pid_t pid, uint64_t deadline, probe_reading *r, int *status)
{
    while (!r->garbled && r->step != STEP_DONE) {
        uint64_t now = now_ms();
        if (now >= deadline) return false;
        int slice = deadline - now < WAIT_SLICE_MS ? (int)(deadline - now) : WAIT_SLICE_MS;
        struct pollfd pf = {fd, POLLIN, 0};
        int ready = fd >= 0 ? poll(&pf, 1, slice) : poll(NULL, 0, 1);
        if (ready > 0) {
            char chunk[256];
            ssize_t got = read(fd, chunk, sizeof chunk);
            if (got > 0) feed(r, chunk, (size_t)got);
            if (got == 0 || (got < 0 && errno != EINTR)) fd = -1; /* EOF: wait for its end */
            continue;
        }
        pid_t done = waitpid(pid, status, WNOHANG);
        if (done == pid) { /* ended: what it wrote before is in the pipe */
            char chunk[256];
            ssize_t got;
            while (fd >= 0 && poll(&pf, 1, 0) > 0 && (got = read(fd, chunk, sizeof chunk)) > 0)
                feed(r, chunk, (size_t)got);
            return true;
        }
    }
    return false;
}

/* Wait for the child's end; SIGKILL it (and whatever it started) first when kill. */
static void reap(pid_t pid, bool kill_it, int *status)
{
    if (kill_it) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
    }
}

/* "SIGSEGV", or the signal's abbreviation. */
static const char *signal_text(int sig, char *buf, size_t len)
{
    const char *name = host_signame(sig);
    if (strncmp(name, "SIG", 3) == 0) return name;
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, len, "SIG%s", abbrev);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

/* The one line for a child that hung (status ignored), crashed or exited at step s. */
static void explain(probe_step s, bool hung, int status, double limit_s, char *why, size_t len)
{
    static const char *const where[] = {
        [STEP_NONE] = "before it started",
        [STEP_STARTED] = "before it started",
        [STEP_DLOPEN] = "while loading",
        [STEP_ENTRY] = "in its entry function " ENTRY_FN,
        [STEP_DESC] = "while its description was read",
        [STEP_DLCLOSE] = "while unloading (a destructor)",
        [STEP_DONE] = "after its report",
    };
    static const char *const crashed[] = {
        [STEP_NONE] = "the probe process died",
        [STEP_STARTED] = "the probe process died",
        [STEP_DLOPEN] = "its constructor crashed",
        [STEP_ENTRY] = "its entry function " ENTRY_FN " crashed",
        [STEP_DESC] = "its description holds a bad pointer: reading it crashed",
        [STEP_DLCLOSE] = "its destructor crashed",
        [STEP_DONE] = "the probe process died after its report",
    };
    static const char *const hung_text[] = {
        [STEP_NONE] = "the probe process did not start",
        [STEP_STARTED] = "the probe process did not start",
        [STEP_DLOPEN] = "did not finish loading",
        [STEP_ENTRY] = "its entry function " ENTRY_FN " did not return",
        [STEP_DESC] = "reading its description did not finish",
        [STEP_DLCLOSE] = "did not finish unloading (a destructor)",
        [STEP_DONE] = "the probe process did not end",
    };
    char buf[32];
    if (hung)
        host_format(why, len, "%s within %g s", hung_text[s], limit_s);
    else if (WIFSIGNALED(status))
        host_format(why, len, "%s with %s", crashed[s],
                    signal_text(WTERMSIG(status), buf, sizeof buf));
    else if (s <= STEP_STARTED)
        host_format(why, len, "the probe process exited with status %d %s: is it ecs-host?",
                    WEXITSTATUS(status), where[s]);
    else
        host_format(why, len, "exit(%d) %s", WEXITSTATUS(status), where[s]);
}

bool host_probe_file(const host_probe_config *cfg, const char *path, host_probe_report *rep,
                     char *why, size_t len)
{
    probe_reading r;
    memset(&r, 0, sizeof r);
    if (rep) *rep = r.rep;
    if (!cfg || !cfg->exe) return true; /* no probe: the host's own checks only */
    uint32_t limit_ms = cfg->limit_ms ? cfg->limit_ms : HOST_PROBE_DEFAULT_LIMIT_MS;
    int fds[2] = {-1, -1}, status = 0;
    pid_t pid = 0;
    int rc = pipe2(fds, O_CLOEXEC) != 0 ? errno : 0;
    if (!rc) rc = spawn_probe(cfg->exe, path, limit_ms, fds[1], &pid);
    if (fds[1] >= 0) close(fds[1]); /* the child's copy only: EOF when it ends */
    if (rc) {
        if (fds[0] >= 0) close(fds[0]);
        host_format(why, len, "cannot run the probe %s: %s", cfg->exe, strerror(rc));
        return false;
    }
    bool reaped = read_report(fds[0], pid, now_ms() + limit_ms, &r, &status);
    close(fds[0]);
    bool hung = !reaped && !r.garbled && r.step != STEP_DONE;
    if (!reaped) reap(pid, r.step != STEP_DONE, &status);
    bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r.garbled)
        host_format(why, len,
                    "the probe's report is garbled (\"%s\" after \"%s\"): does its code "
                    "write to file descriptor %d?",
                    r.bad, r.step == STEP_NONE ? "" : step_lines[r.step], REPORT_FD);
    else if (r.step != STEP_DONE || !clean)
        explain(r.step, hung, status, limit_ms / 1000.0, why, len);
    else if (rep)
        *rep = r.rep;
    return !r.garbled && r.step == STEP_DONE && clean;
}

const char *host_probe_self(void)
{
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || (size_t)n >= sizeof self - 1) return NULL;
    self[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t d = sizeof deleted - 1;
    if ((size_t)n > d && strcmp(self + n - d, deleted) == 0) return NULL;
    return access(self, X_OK) == 0 ? self : NULL;
}
