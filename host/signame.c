/* SPDX-License-Identifier: MIT */
/* signame.c: what a signal that stopped plugin code is called in messages (signame.h). */
#include "signame.h"

#include <signal.h>

bool host_signame_is_stop(int sig)
{
    return sig == SIGINT || sig == SIGTERM;
}

const char *host_signame(int sig)
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

const char *host_signame_outcome(int sig)
{
    switch (sig) {
    case SIGINT:
        return "was abandoned at the second SIGINT";
    case SIGTERM:
        return "was abandoned at the second SIGTERM";
    case SIGSEGV:
        return "crashed with SIGSEGV";
    case SIGBUS:
        return "crashed with SIGBUS";
    case SIGFPE:
        return "crashed with SIGFPE";
    case SIGILL:
        return "crashed with SIGILL";
    case SIGABRT:
        return "crashed with SIGABRT (abort)";
    default:
        return "crashed with a signal";
    }
}
