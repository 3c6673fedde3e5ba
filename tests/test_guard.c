/* SPDX-License-Identifier: MIT */
/* test_guard.c: the --safe crash guard (host/plugin/guard.c): a fault while plugin code runs under
 * the guard is caught; a fault outside it is re-raised, never swallowed (forked children). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "harness.h"

static void segv(void *arg)
{
    (void)arg;
    raise(SIGSEGV);
}

static void fpe(void *arg)
{
    (void)arg;
    raise(SIGFPE);
}

static void aborts(void *arg)
{
    (void)arg;
    abort();
}

static void fine(void *arg)
{
    *(int *)arg = 42;
}

static void catch_three(void)
{
    if (!host_guard_install()) _exit(10);
    if (host_guard_run(segv, NULL) != SIGSEGV) _exit(11);
    if (host_guard_run(fpe, NULL) != SIGFPE) _exit(12);
    if (host_guard_run(aborts, NULL) != SIGABRT) _exit(13);
    int v = 0;
    if (host_guard_run(fine, &v) != 0 || v != 42) _exit(14);
    if (host_guard_run(segv, NULL) != SIGSEGV) _exit(15); /* again: nothing left blocked */
}

static void Guard_catches_faults_in_guarded_code_and_runs_on(void **state)
{
    (void)state;
    int status = harness_in_child(catch_three);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void fault_outside(void)
{
    if (!host_guard_install()) _exit(10);
    int v = 0;
    host_guard_run(fine, &v);
    raise(SIGSEGV); /* the host's own code: no jump point is armed */
}

static void Guard_re_raises_a_fault_outside_plugin_code(void **state)
{
    (void)state;
    int status = harness_in_child(fault_outside);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

static void unguarded(void)
{
    signal(SIGSEGV, SIG_DFL);   /* as in ecs-host, not cmocka, which catches signals itself */
    host_guard_run(segv, NULL); /* never installed (no --safe): a crash is a crash */
}

static void Guard_not_installed_means_a_crash_is_a_crash(void **state)
{
    (void)state;
    int status = harness_in_child(unguarded);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(Guard_catches_faults_in_guarded_code_and_runs_on),
        cmocka_unit_test(Guard_re_raises_a_fault_outside_plugin_code),
        cmocka_unit_test(Guard_not_installed_means_a_crash_is_a_crash),
    };
    return cmocka_run_group_tests_name("guard", tests, NULL, NULL);
}
