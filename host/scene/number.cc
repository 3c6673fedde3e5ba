/* SPDX-License-Identifier: MIT */
// number.cc: the C interface of number.h over dragonbox (shortest round-trip digits) and
// fast_float (correctly rounded parsing). No exceptions, no allocation.
#include "number.h"

#include <dragonbox/dragonbox.h>
#include <fast_float/fast_float.h>

namespace
{

template <class Float> uint64_t shortest(Float x, int *exp10)
{
    namespace p = jkj::dragonbox::policy;
    auto d = jkj::dragonbox::to_decimal(x, p::sign::ignore, p::trailing_zero::remove);
    *exp10 = d.exponent;
    return d.significand;
}

}  // namespace

extern "C" uint64_t host_number_shortest_f64(double x, int *exp10)
{
    return shortest(x, exp10);
}

extern "C" uint64_t host_number_shortest_f32(float x, int *exp10)
{
    return shortest(x, exp10);
}

extern "C" const char *host_number_parse(const char *begin, const char *end, double *out)
{
    auto r = fast_float::from_chars(begin, end, *out);
    return r.ec == std::errc() || r.ec == std::errc::result_out_of_range ? r.ptr : nullptr;
}
