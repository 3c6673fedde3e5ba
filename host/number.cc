// number.cc: the C interface of number.h over dragonbox (shortest round-trip digits) and
// fast_float (correctly rounded parsing). No exceptions, no allocation.
#include "number.h"

#include <dragonbox/dragonbox.h>
#include <fast_float/fast_float.h>

namespace {

// Decimal digits of v (1-20).
int digit_count(uint64_t v)
{
    static const uint64_t pow10[] = {10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};
    int n = 1;
    while (n < 20 && v >= pow10[n - 1]) n++;
    return n;
}

// The n digits of v as characters into out[0..n), two at a time.
void write_digits(uint64_t v, int n, char *out)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char *o = out + n;
    while (v >= 100) {
        unsigned k = unsigned(v % 100) * 2;
        v /= 100;
        *--o = pairs[k + 1];
        *--o = pairs[k];
    }
    if (v >= 10) {
        *--o = pairs[v * 2 + 1];
        *--o = pairs[v * 2];
    } else {
        *--o = char('0' + v);
    }
}

template <class Float> int shortest(Float x, char *digits, int *exp10)
{
    namespace p = jkj::dragonbox::policy;
    auto d = jkj::dragonbox::to_decimal(x, p::sign::ignore, p::trailing_zero::remove);
    int n = digit_count(d.significand);
    write_digits(d.significand, n, digits);
    *exp10 = d.exponent;
    return n;
}

} // namespace

extern "C" int host_number_shortest_f64(double x, char *digits, int *exp10)
{
    return shortest(x, digits, exp10);
}

extern "C" int host_number_shortest_f32(float x, char *digits, int *exp10)
{
    return shortest(x, digits, exp10);
}

extern "C" const char *host_number_parse(const char *begin, const char *end, double *out)
{
    auto r = fast_float::from_chars(begin, end, *out);
    return r.ec == std::errc() || r.ec == std::errc::result_out_of_range ? r.ptr : nullptr;
}
