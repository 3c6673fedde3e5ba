/* SPDX-License-Identifier: MIT */
/* number.h: numbers between binary and decimal, exactly and fast. The two well-kept
 * libraries that do this best are C++ header-only ones (Debian's libdragonbox-dev and
 * libfast-float-dev); number.cc wraps them behind this C interface.
 *
 * - The shortest decimal that reads back as exactly the same float or double
 *   (dragonbox): digits and a power of ten, for the JSON writer to lay out.
 * - A decimal number (JSON syntax, already checked) to the nearest double (fast_float,
 *   correctly rounded like strtod but several times faster, and locale-free). */
#ifndef HOST_NUMBER_H
#define HOST_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* |x| = significand * 10^*exp10 with the fewest significant digits (1-17, no trailing
 * zeros) that convert back to x; the significand is returned. x must be finite and not
 * zero. */
uint64_t host_number_shortest_f64(double x, int *exp10);
/* The same for a float (1-9 digits). */
uint64_t host_number_shortest_f32(float x, int *exp10);

/* The double nearest the decimal number in [begin, end) (JSON grammar, checked by the
 * caller); out-of-range values give +-inf or +-0 as strtod does. Returns the end of the
 * number read, or NULL when no number starts at begin. */
const char *host_number_parse(const char *begin, const char *end, double *out);

#ifdef __cplusplus
}
#endif

#endif
