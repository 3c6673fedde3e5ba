/* SPDX-License-Identifier: MIT */
/* test_timing.c: cmocka tests of the update-time statistics (host/world/timing.c): count, mean,
 * max, and histogram quantiles within the 1/16 bucket error on known distributions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "timing.h"

enum { SAMPLES = 20000 };

/* A zeroed timing and room for samples, freed also when a test fails. */
typedef struct fixture {
    host_timing t;
    uint64_t v[SAMPLES];
} fixture;

static int setup(void **state)
{
    return (*state = calloc(1, sizeof(fixture))) ? 0 : -1;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

static host_timing *timing_new(void **state)
{
    host_timing *t = &((fixture *)*state)->t;
    memset(t, 0, sizeof *t);
    return t;
}

/* The histogram answers with the top of the bucket holding the true value: never below
 * it, above it by less than 1/16 of it. */
static void expect_near(uint64_t got, uint64_t truth, const char *what)
{
    if (got < truth || (double)got > (double)truth * (1.0 + 1.0 / 16.0))
        fail_msg("%s: got %llu, true value %llu (allowed %llu..%llu)", what,
                 (unsigned long long)got, (unsigned long long)truth, (unsigned long long)truth,
                 (unsigned long long)((double)truth * (1.0 + 1.0 / 16.0)));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void Timing_empty_returns_zero(void **state)
{
    host_timing *t = timing_new(state);
    assert_int_equal(host_timing_quantile(t, 0.5), 0);
    assert_int_equal(host_timing_quantile(t, 0.99), 0);
    assert_int_equal(host_timing_quantile(t, 1.0), 0);
    assert_true(host_timing_mean(t) == 0.0);
}

static void Timing_uniform_1_to_1000_quantiles_within_bucket_error(void **state)
{
    host_timing *t = timing_new(state);
    for (uint64_t ns = 1000; ns >= 1; ns--) host_timing_record(t, ns); /* order must not matter */
    assert_int_equal(t->count, 1000);
    assert_int_equal(t->total_ns, 500500);
    assert_int_equal(t->max_ns, 1000);
    assert_true(host_timing_mean(t) == 500.5); /* exact */
    expect_near(host_timing_quantile(t, 0.5), 500, "p50");
    expect_near(host_timing_quantile(t, 0.9), 900, "p90");
    expect_near(host_timing_quantile(t, 0.99), 990, "p99");
    assert_int_equal(host_timing_quantile(t, 1.0), 1000); /* max is exact */
    expect_near(host_timing_quantile(t, 0.0), 1, "p0");
}

static void Timing_values_below_16ns_are_exact(void **state)
{
    host_timing *t = timing_new(state);
    for (uint64_t ns = 0; ns < 16; ns++) host_timing_record(t, ns);
    for (int k = 1; k <= 16; k++) /* the k-th smallest of 0..15 is k - 1 */
        assert_int_equal(host_timing_quantile(t, k / 16.0), (uint64_t)(k - 1));
    assert_true(host_timing_mean(t) == 7.5);
}

static void Timing_single_sample_every_quantile_is_that_sample(void **state)
{
    static const uint64_t values[] = {
        0, 1, 15, 16, 17, 1000, 123456789, 5000000000ull, UINT64_MAX / 3};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        host_timing *t = timing_new(state);
        host_timing_record(t, values[i]);
        /* capped by the exact max, so a lone sample comes back exactly */
        assert_int_equal(host_timing_quantile(t, 0.01), values[i]);
        assert_int_equal(host_timing_quantile(t, 0.5), values[i]);
        assert_int_equal(host_timing_quantile(t, 1.0), values[i]);
        assert_true(host_timing_mean(t) == (double)values[i]);
    }
}

static void Timing_mean_and_max_exact_for_skewed_samples(void **state)
{
    host_timing *t = timing_new(state);
    host_timing_record(t, 10);
    host_timing_record(t, 20);
    host_timing_record(t, 3000000000ull); /* one 3 s frame */
    host_timing_record(t, 30);
    assert_int_equal(t->count, 4);
    assert_int_equal(t->max_ns, 3000000000ull);
    assert_true(host_timing_mean(t) == 3000000060.0 / 4.0);
    assert_int_equal(host_timing_quantile(t, 0.5), 20);
    assert_int_equal(host_timing_quantile(t, 1.0), 3000000000ull);
}

static void Timing_two_clusters_median_and_tail(void **state)
{
    host_timing *t = timing_new(state);
    for (int i = 0; i < 900; i++) host_timing_record(t, 50000);   /* 50 us */
    for (int i = 0; i < 100; i++) host_timing_record(t, 2000000); /* 2 ms */
    expect_near(host_timing_quantile(t, 0.5), 50000, "p50");
    expect_near(host_timing_quantile(t, 0.9), 50000, "p90");
    assert_int_equal(host_timing_quantile(t, 0.99), 2000000); /* top bucket capped by max */
}

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Log-uniform samples from 1 ns to about 1 s: each quantile, at the rank the function
 * uses (q * count rounded), is within the bucket error of the sorted samples. */
static void Timing_random_log_uniform_quantiles_within_bucket_error(void **state)
{
    const uint64_t seed0 = 0x71A1F00D;
    uint64_t s = seed0;
    enum { N = SAMPLES };
    uint64_t *v = ((fixture *)*state)->v;
    host_timing *t = timing_new(state);
    for (int i = 0; i < N; i++) {
        double e = (double)(rng_next(&s) >> 11) / 9007199254740992.0 * 30.0; /* 2^0..2^30 */
        v[i] = (uint64_t)pow(2.0, e);
        host_timing_record(t, v[i]);
    }
    qsort(v, N, sizeof *v, cmp_u64);
    static const double qs[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        uint64_t rank = (uint64_t)(qs[k] * N + 0.5);
        char what[64];
        snprintf(what, sizeof what, "seed %#llx q %g", (unsigned long long)seed0, qs[k]);
        expect_near(host_timing_quantile(t, qs[k]), v[rank - 1], what);
    }
    assert_int_equal(t->max_ns, v[N - 1]);
}

/* The contract: "the value below which a fraction q of the samples fall". So at least
 * q * count samples must be <= the answer. Checked on exact small values (< 16 ns). */
static void Timing_quantile_has_at_least_fraction_q_at_or_below(void **state)
{
    for (uint64_t n = 1; n <= 15; n++) {
        host_timing *t = timing_new(state);
        for (uint64_t ns = 1; ns <= n; ns++) host_timing_record(t, ns); /* samples 1..n */
        for (int qi = 1; qi <= 100; qi++) {
            double q = qi / 100.0;
            uint64_t got = host_timing_quantile(t, q);
            uint64_t at_or_below = got < n ? got : n; /* samples 1..got */
            if ((double)at_or_below < q * (double)n - 1e-9)
                fail_msg("samples 1..%llu, q %.2f: answer %llu has only %llu of %llu samples "
                         "at or below it (%.0f%%), fewer than %.0f%%",
                         (unsigned long long)n, q, (unsigned long long)got,
                         (unsigned long long)at_or_below, (unsigned long long)n,
                         100.0 * (double)at_or_below / (double)n, 100.0 * q);
        }
    }
}

/* The cheap clock (clock.h) measures an interval as CLOCK_MONOTONIC does: the two read
 * the same span (bracketed by both clocks), and must agree to 1 % (the calibration's
 * error is far below; the bound only absorbs the reading order). Not a timing of the
 * code: a check of the conversion factor. */
static void Clock_ticks_convert_to_the_monotonic_span(void **state)
{
    (void)state;
    host_clock_init();
    host_clock_init(); /* a second call keeps the first calibration */
    for (int round = 0; round < 3; round++) {
        uint64_t n0 = host_clock_mono_ns(), t0 = host_clock_ticks();
        while (host_clock_mono_ns() - n0 < 20000000) { /* 20 ms */
        }
        uint64_t t1 = host_clock_ticks(), n1 = host_clock_mono_ns();
        double ticks_ns = (double)host_clock_ns(t0, t1), mono_ns = (double)(n1 - n0);
        if (fabs(ticks_ns - mono_ns) > 0.01 * mono_ns)
            fail_msg("round %d: the clock says %.0f ns, CLOCK_MONOTONIC %.0f ns (tsc: %d)", round,
                     ticks_ns, mono_ns, (int)host_clock_global.tsc);
    }
    assert_int_equal(host_clock_ns(5, 3), 0); /* a reading before the first: no huge span */
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(Timing_empty_returns_zero),
        TEST(Timing_uniform_1_to_1000_quantiles_within_bucket_error),
        TEST(Timing_values_below_16ns_are_exact),
        TEST(Timing_single_sample_every_quantile_is_that_sample),
        TEST(Timing_mean_and_max_exact_for_skewed_samples),
        TEST(Timing_two_clusters_median_and_tail),
        TEST(Timing_random_log_uniform_quantiles_within_bucket_error),
        TEST(Timing_quantile_has_at_least_fraction_q_at_or_below),
        cmocka_unit_test(Clock_ticks_convert_to_the_monotonic_span),
    };
    return cmocka_run_group_tests_name("timing", tests, NULL, NULL);
}
