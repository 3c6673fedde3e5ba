/* SPDX-License-Identifier: MIT */
/* guard.c: the --safe crash guard (guard.h). Single-threaded like the rest of the host:
 * one armed jump point at a time, kept in a static. */
#include "guard.h"

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const int guarded[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static sigjmp_buf *volatile armed;
static bool installed;

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    sigjmp_buf *jb = armed;
    if (jb) {
        armed = NULL;
        siglongjmp(*jb, sig); /* SA_NODEFER: the signal is not left blocked */
    }
    signal(sig, SIG_DFL); /* not plugin code: the host's own fault, as it is */
    raise(sig);
}

bool host_guard_install(void)
{
    if (installed) return true;
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    bool ok = sigaltstack(&ss, NULL) == 0;
    for (size_t i = 0; ok && i < sizeof guarded / sizeof *guarded; i++)
        ok = sigaction(guarded[i], &sa, NULL) == 0;
    if (!ok) host_error("guard", "cannot install the crash guard: --safe is off");
    installed = ok;
    return ok;
}

bool host_guard_active(void)
{
    return installed;
}

int host_guard_run(void (*fn)(void *), void *arg)
{
    if (!installed || armed) {
        fn(arg);
        return 0;
    }
    sigjmp_buf jb;
    int sig = sigsetjmp(jb, 0);
    if (sig == 0) {
        armed = &jb;
        fn(arg);
        armed = NULL;
    }
    return sig;
}

bool host_guard_abandon(int sig)
{
    sigjmp_buf *jb = armed;
    if (!jb) return false;
    armed = NULL;
    sigset_t unblock; /* sigsetjmp(jb, 0) keeps no mask: the next signal must get through */
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    siglongjmp(*jb, sig);
}

bool host_guard_is_stop(int sig)
{
    return sig == SIGINT || sig == SIGTERM;
}

const char *host_guard_signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT (abort)";
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    default:
        return "a signal";
    }
}
