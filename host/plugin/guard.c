/* SPDX-License-Identifier: MIT */
/* guard.c: plugin code under watch (guard.h). One armed jump point at a time, kept in a
 * static and only ever armed and jumped to on the main thread; the current call is two
 * atomics the main thread writes; the libraries are a fixed table of (link map, plugin
 * name) read by the fault handler. What the handler writes, it writes with write(2) from
 * its own buffer: nothing in it allocates or takes a lock but dladdr's. */
#include "guard.h"

#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "log.h"

static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static sigjmp_buf *volatile armed;
/* A job thread's own jump point (host_guard_catch on a worker); NULL on every other thread,
 * so a thread the host did not start is never jumped from. */
static _Thread_local sigjmp_buf *volatile thread_armed;
static _Thread_local volatile bool thread_in_job; /* a worker runs a chunk under the guard */
/* The first fault caught in a job since the enclosing guarded call began: that call then
 * returns it, as if its own code had crashed (the job was its code). */
static _Atomic(int) job_fault;
static bool reporting, jumping; /* handlers installed; --safe */
static pid_t main_tid;

/* ---- the libraries that hold plugin code ---- */

#define LIBRARIES 256
static struct library {
    _Atomic(void *) map; /* its link map; NULL: a free slot */
    char name[64];
} libraries[LIBRARIES];

void host_guard_library(void *dl, const char *plugin)
{
    struct link_map *map = NULL;
    if (!dl || dlinfo(dl, RTLD_DI_LINKMAP, &map) != 0 || !map) return;
    for (size_t i = 0; i < LIBRARIES; i++) {
        if (atomic_load(&libraries[i].map)) continue;
        size_t n = strlen(plugin ? plugin : "");
        n = n < sizeof libraries[i].name - 1 ? n : sizeof libraries[i].name - 1;
        memcpy(libraries[i].name, plugin ? plugin : "", n);
        libraries[i].name[n] = '\0';
        atomic_store(&libraries[i].map, (void *)map); /* the name first: a reader sees it */
        return;
    }
}

void host_guard_library_gone(void *dl)
{
    struct link_map *map = NULL;
    if (!dl || dlinfo(dl, RTLD_DI_LINKMAP, &map) != 0) return;
    for (size_t i = 0; i < LIBRARIES; i++)
        if (atomic_load(&libraries[i].map) == (void *)map) atomic_store(&libraries[i].map, NULL);
}

/* The plugin whose library is map, or NULL. */
static const char *plugin_of_map(const void *map)
{
    for (size_t i = 0; map && i < LIBRARIES; i++)
        if (atomic_load(&libraries[i].map) == map) return libraries[i].name;
    return NULL;
}

/* ---- a line written from a signal handler ---- */

typedef struct line {
    char buf[1024];
    size_t len;
} line;

static void put(line *l, const char *s)
{
    for (; s && *s && l->len < sizeof l->buf - 2; s++) /* plugin text: no line breaks */
        l->buf[l->len++] = (*s == '\n' || *s == '\r') ? ' ' : *s;
}

static void put_hex(line *l, uintptr_t v)
{
    char digits[2 + 2 * sizeof v + 1], *at = digits + sizeof digits - 1;
    *at = '\0';
    do {
        *--at = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *--at = 'x';
    *--at = '0';
    put(l, at);
}

/* The code address of the fault (the instruction), or 0 when this machine's context is
 * not known here. */
static uintptr_t code_address(const void *context)
{
    const ucontext_t *uc = context;
#if defined(__x86_64__)
    return uc ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
#elif defined(__aarch64__)
    return uc ? (uintptr_t)uc->uc_mcontext.pc : 0;
#else
    (void)uc;
    return 0;
#endif
}

/* "code of plugin 'x' (x.so+0x11a9)" or "code in /lib/libc.so.6 (raise+0x10f)". */
static void put_code(line *l, uintptr_t pc)
{
    Dl_info info;
    void *map = NULL;
    if (!pc || !dladdr1((void *)pc, &info, &map, RTLD_DL_LINKMAP) || !info.dli_fname) {
        put(l, "code at ");
        put_hex(l, pc);
        put(l, " (in no library)");
        return;
    }
    const char *plugin = plugin_of_map(map), *file = strrchr(info.dli_fname, '/');
    file = file ? file + 1 : info.dli_fname;
    if (plugin) {
        put(l, "code of plugin '");
        put(l, plugin);
        put(l, "' (");
    } else {
        put(l, "code in ");
        put(l, *info.dli_fname ? info.dli_fname : "ecs-host");
        put(l, " (");
    }
    if (info.dli_sname && !plugin) { /* a plugin's own functions are hidden: no names */
        put(l, info.dli_sname);
        put(l, "+");
        put_hex(l, pc - (uintptr_t)info.dli_saddr);
    } else {
        put(l, *file ? file : "ecs-host");
        put(l, "+");
        put_hex(l, pc - (uintptr_t)info.dli_fbase);
    }
    put(l, ")");
}

size_t host_guard_describe(char *buf, size_t size)
{
    const host_call *c = atomic_load_explicit(&host_call_now, memory_order_acquire);
    line l = {.len = 0};
    if (!c || size == 0) return 0;
    put(&l, "plugin '");
    put(&l, c->plugin ? c->plugin : "?");
    put(&l, "' has been running ");
    put(&l, c->what);
    if (c->of) put(&l, " of '"), put(&l, c->of), put(&l, "'");
    size_t n = l.len < size - 1 ? l.len : size - 1;
    memcpy(buf, l.buf, n);
    buf[n] = '\0';
    return n;
}

/* One line for a crash that ends the process: what ran, where the code is, the address. */
static void report_crash(int sig, const siginfo_t *info, const void *context, bool main)
{
    line l = {.len = 0};
    const host_call *c = main || thread_in_job ? atomic_load(&host_call_now) : NULL;
    put(&l, "[error] guard: ");
    if (!main && c) {
        put(&l, "a job of plugin '");
        put(&l, c->plugin ? c->plugin : "?");
        put(&l, "' crashed on a worker thread with ");
    } else if (!main) {
        put(&l, "a thread other than the main one crashed with ");
    } else if (c) {
        put(&l, "plugin '");
        put(&l, c->plugin ? c->plugin : "?");
        put(&l, "' crashed with ");
    } else {
        put(&l, "the host crashed with ");
    }
    put(&l, host_signame(sig));
    if (c) {
        put(&l, " in ");
        put(&l, c->what);
        if (c->of) put(&l, " of '"), put(&l, c->of), put(&l, "'");
    }
    put(&l, ", ");
    put_code(&l, code_address(context));
    if (info && info->si_code > 0 && sig != SIGABRT) /* from the kernel: a real address */
        put(&l, ", address "), put_hex(&l, (uintptr_t)info->si_addr);
    if (!main && c)
        put(&l, ": ending as the signal does (--safe catches crashes in jobs)");
    else if (!main)
        put(&l, ": plugin threads are the plugin's own risk (docs/abi.md); ending as the signal "
                "does, nothing saved");
    else
        put(&l, jumping ? ": not plugin code under the guard; ending as the signal does"
                        : ": ending as the signal does (--safe catches crashes in plugin code)");
    l.buf[l.len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, l.buf, l.len);
    (void)ignored;
}

/* ---- the handlers ---- */

bool host_guard_on_main_thread(void)
{
    return main_tid != 0 && (pid_t)syscall(SYS_gettid) == main_tid;
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    bool main = host_guard_on_main_thread();
    sigjmp_buf *jb = main ? armed : thread_armed; /* each thread to its own point only */
    if (jb) {
        if (main)
            armed = NULL;
        else
            thread_armed = NULL;
        siglongjmp(*jb, sig); /* SA_NODEFER: the signal is not left blocked */
    }
    report_crash(sig, info, context, main);
    signal(sig, SIG_DFL); /* as it is: the process ends as the signal says */
    raise(sig);
}

bool host_guard_report_install(void)
{
    if (reporting) return true;
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    bool ok = sigaltstack(&ss, NULL) == 0;
    for (size_t i = 0; ok && i < sizeof faults / sizeof *faults; i++)
        ok = sigaction(faults[i], &sa, NULL) == 0;
    if (!ok) host_error("guard", "cannot install the crash handlers");
    main_tid = (pid_t)syscall(SYS_gettid);
    reporting = ok;
    return ok;
}

bool host_guard_install(void)
{
    if (!host_guard_report_install()) {
        host_error("guard", "--safe is off");
        return false;
    }
    jumping = true;
    return true;
}

bool host_guard_active(void)
{
    return jumping;
}

int host_guard_call(const host_call *c, void (*fn)(void *), void *arg)
{
    const host_call *volatile was = atomic_load_explicit(&host_call_now, memory_order_relaxed);
    if (c) host_call_enter(c);
    int sig = 0;
    if (!jumping || armed) {
        fn(arg);
    } else {
        sigjmp_buf jb;
        sig = sigsetjmp(jb, 0);
        if (sig == 0) {
            armed = &jb;
            fn(arg);
            armed = NULL;
        }
        int in_job = atomic_exchange(&job_fault, 0); /* a crash in a job it started */
        if (!sig) sig = in_job;
    }
    if (c || sig) host_call_leave(was); /* after a jump: not the call that never returned */
    return sig;
}

int host_guard_catch(void (*fn)(void *), void *arg)
{
    bool main = host_guard_on_main_thread();
    thread_in_job = !main;
    int sig = 0;
    if (!jumping) {
        fn(arg);
    } else {
        sigjmp_buf jb, *volatile outer = main ? armed : thread_armed;
        sig = sigsetjmp(jb, 0);
        if (sig == 0) {
            if (main)
                armed = &jb;
            else
                thread_armed = &jb;
            fn(arg);
        }
        if (main)
            armed = outer; /* the enclosing call's point again */
        else
            thread_armed = outer;
        int none = 0;
        if (sig) atomic_compare_exchange_strong(&job_fault, &none, sig);
    }
    thread_in_job = false;
    return sig;
}

int host_guard_run(void (*fn)(void *), void *arg)
{
    return host_guard_call(NULL, fn, arg);
}

bool host_guard_abandon(int sig)
{
    sigjmp_buf *jb = host_guard_on_main_thread() ? armed : NULL;
    if (!jb) return false;
    armed = NULL;
    sigset_t unblock; /* sigsetjmp(jb, 0) keeps no mask: the next signal must get through */
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    siglongjmp(*jb, sig);
}
