// number.cc: the C interface of number.h over dragonbox (shortest round-trip digits) and
// fast_float (correctly rounded parsing). No exceptions, no allocation.
#include "number.h"

#include <dragonbox/dragonbox.h>
#include <fast_float/fast_float.h>

namespace {

template <class Float> int shortest(Float x, uint64_t *digits, int *exp10)
{
    namespace p = jkj::dragonbox::policy;
    auto d = jkj::dragonbox::to_decimal(x, p::sign::ignore, p::trailing_zero::remove);
    uint64_t s = d.significand;
    int n = 1;
    for (uint64_t t = s; t >= 10; t /= 10) n++;
    *digits = s;
    *exp10 = d.exponent;
    return n;
}

} // namespace

extern "C" int host_number_shortest_f64(double x, uint64_t *digits, int *exp10)
{
    return shortest(x, digits, exp10);
}

extern "C" int host_number_shortest_f32(float x, uint64_t *digits, int *exp10)
{
    return shortest(x, digits, exp10);
}

extern "C" const char *host_number_parse(const char *begin, const char *end, double *out)
{
    auto r = fast_float::from_chars(begin, end, *out);
    return r.ec == std::errc() || r.ec == std::errc::result_out_of_range ? r.ptr : nullptr;
}
