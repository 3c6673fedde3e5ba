/* SPDX-License-Identifier: MIT */
/* ecs_math.h: the small 3D math the SDK's plugins share (header-only, C11 and C++).
 *
 * Vectors of 3 floats, quaternions (x, y, z, w), column-major 4x4 matrices: element
 * (row r, column c) is m[c * 4 + r], translation in m[12..14]. TRS(p, q, s) = T * R * S,
 * so a point is scaled, then rotated, then moved. The operation order of the functions
 * is fixed (scalar, no FMA contraction assumed), so results are reproducible.
 */
#ifndef ECS_MATH_H
#define ECS_MATH_H

#include <math.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ecs_vec3 {
    float x, y, z;
} ecs_vec3;

typedef struct ecs_quat {
    float x, y, z, w;
} ecs_quat;

typedef struct ecs_mat4 {
    float m[16];
} ecs_mat4;

typedef struct ecs_aabb {
    ecs_vec3 min, max;
} ecs_aabb;

static inline ecs_vec3 ecs_vec3_make(float x, float y, float z)
{
    ecs_vec3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}

static inline ecs_quat ecs_quat_identity(void)
{
    ecs_quat q;
    q.x = q.y = q.z = 0.0f;
    q.w = 1.0f;
    return q;
}

static inline ecs_mat4 ecs_mat4_identity(void)
{
    ecs_mat4 r;
    for (int i = 0; i < 16; i++) r.m[i] = (i % 5 == 0) ? 1.0f : 0.0f;
    return r;
}

/* Hamilton product a * b (apply b, then a). */
static inline ecs_quat ecs_quat_mul(ecs_quat a, ecs_quat b)
{
    ecs_quat r;
    r.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
    r.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
    r.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
    r.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
    return r;
}

/* q scaled to unit length; the identity for a zero quaternion. */
static inline ecs_quat ecs_quat_normalize(ecs_quat q)
{
    float n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (!(n > 0.0f)) return ecs_quat_identity();
    float inv = 1.0f / sqrtf(n);
    q.x *= inv;
    q.y *= inv;
    q.z *= inv;
    q.w *= inv;
    return q;
}

/* The matrix T(p) * R(q) * S(s), q a unit quaternion. */
static inline ecs_mat4 ecs_mat4_trs(ecs_vec3 p, ecs_quat q, ecs_vec3 s)
{
    float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    ecs_mat4 r;
    r.m[0] = (1.0f - 2.0f * (yy + zz)) * s.x;
    r.m[1] = (2.0f * (xy + wz)) * s.x;
    r.m[2] = (2.0f * (xz - wy)) * s.x;
    r.m[3] = 0.0f;
    r.m[4] = (2.0f * (xy - wz)) * s.y;
    r.m[5] = (1.0f - 2.0f * (xx + zz)) * s.y;
    r.m[6] = (2.0f * (yz + wx)) * s.y;
    r.m[7] = 0.0f;
    r.m[8] = (2.0f * (xz + wy)) * s.z;
    r.m[9] = (2.0f * (yz - wx)) * s.z;
    r.m[10] = (1.0f - 2.0f * (xx + yy)) * s.z;
    r.m[11] = 0.0f;
    r.m[12] = p.x;
    r.m[13] = p.y;
    r.m[14] = p.z;
    r.m[15] = 1.0f;
    return r;
}

/* a * b (apply b, then a). */
static inline ecs_mat4 ecs_mat4_mul(const ecs_mat4 *a, const ecs_mat4 *b)
{
    ecs_mat4 r;
    for (int c = 0; c < 4; c++) {
        for (int row = 0; row < 4; row++) {
            r.m[c * 4 + row] =
                a->m[0 * 4 + row] * b->m[c * 4 + 0] + a->m[1 * 4 + row] * b->m[c * 4 + 1] +
                a->m[2 * 4 + row] * b->m[c * 4 + 2] + a->m[3 * 4 + row] * b->m[c * 4 + 3];
        }
    }
    return r;
}

/* m applied to the point p (w = 1). */
static inline ecs_vec3 ecs_mat4_point(const ecs_mat4 *m, ecs_vec3 p)
{
    return ecs_vec3_make(m->m[0] * p.x + m->m[4] * p.y + m->m[8] * p.z + m->m[12],
                         m->m[1] * p.x + m->m[5] * p.y + m->m[9] * p.z + m->m[13],
                         m->m[2] * p.x + m->m[6] * p.y + m->m[10] * p.z + m->m[14]);
}

/* The axis-aligned box around box transformed by m (Arvo's method: exact for the 8
 * corners' bounding box). The two selections compare in opposite directions on purpose:
 * with one shared compare GCC -O2 emits a data-dependent branch per product (about 9x
 * slower on random rotations); as written both become branch-free min/max. */
static inline ecs_aabb ecs_aabb_transform(const ecs_mat4 *m, ecs_aabb box)
{
    float lo[3] = {m->m[12], m->m[13], m->m[14]}, hi[3] = {m->m[12], m->m[13], m->m[14]};
    const float bmin[3] = {box.min.x, box.min.y, box.min.z};
    const float bmax[3] = {box.max.x, box.max.y, box.max.z};
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
            float a = m->m[c * 4 + r] * bmin[c], b = m->m[c * 4 + r] * bmax[c];
            lo[r] += a < b ? a : b;
            hi[r] += b < a ? a : b;
        }
    }
    ecs_aabb out;
    out.min = ecs_vec3_make(lo[0], lo[1], lo[2]);
    out.max = ecs_vec3_make(hi[0], hi[1], hi[2]);
    return out;
}

static inline bool ecs_finite3(ecs_vec3 v)
{
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* The unit quaternion of the rotation matrix whose columns are the unit, orthogonal,
 * right-handed vectors x, y, z (Shepperd's method: the largest of w, x, y, z is taken
 * from the diagonal, the others from the off-diagonal sums, so no square root of a small
 * number is taken). */
static inline ecs_quat ecs_quat_from_axes(ecs_vec3 x, ecs_vec3 y, ecs_vec3 z)
{
    float tr = x.x + y.y + z.z;
    ecs_quat q;
    if (tr > 0.0f) {
        float s = sqrtf(tr + 1.0f) * 2.0f; /* 4w */
        q.w = 0.25f * s;
        q.x = (y.z - z.y) / s;
        q.y = (z.x - x.z) / s;
        q.z = (x.y - y.x) / s;
    } else if (x.x > y.y && x.x > z.z) {
        float s = sqrtf(1.0f + x.x - y.y - z.z) * 2.0f; /* 4x */
        q.w = (y.z - z.y) / s;
        q.x = 0.25f * s;
        q.y = (y.x + x.y) / s;
        q.z = (z.x + x.z) / s;
    } else if (y.y > z.z) {
        float s = sqrtf(1.0f + y.y - x.x - z.z) * 2.0f; /* 4y */
        q.w = (z.x - x.z) / s;
        q.x = (y.x + x.y) / s;
        q.y = 0.25f * s;
        q.z = (z.y + y.z) / s;
    } else {
        float s = sqrtf(1.0f + z.z - x.x - y.y) * 2.0f; /* 4z */
        q.w = (x.y - y.x) / s;
        q.x = (z.x + x.z) / s;
        q.y = (z.y + y.z) / s;
        q.z = 0.25f * s;
    }
    return ecs_quat_normalize(q);
}

static inline float ecs_vec3_dot(ecs_vec3 a, ecs_vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline ecs_vec3 ecs_vec3_cross(ecs_vec3 a, ecs_vec3 b)
{
    return ecs_vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

/* v / |v|, or `fallback` when v is too short to give a direction. */
static inline ecs_vec3 ecs_vec3_normalize_or(ecs_vec3 v, ecs_vec3 fallback)
{
    float n = sqrtf(ecs_vec3_dot(v, v));
    if (!(n > 1e-20f)) return fallback;
    return ecs_vec3_make(v.x / n, v.y / n, v.z / n);
}

/* Split an affine matrix m into *p, *q, *s with TRS(p, q, s) as close to m as a TRS can
 * be: p is the translation, s the lengths of the three basis columns (s.x negated when m
 * mirrors), q the rotation of the basis made orthonormal by Gram-Schmidt from the x
 * column on. Exact (up to rounding) when m is a TRS, i.e. has no shear: a product of TRS
 * matrices with non-uniform scales may have some, which no TRS can hold. A zero column
 * gets a direction perpendicular to the others. */
static inline void ecs_mat4_decompose(const ecs_mat4 *m, ecs_vec3 *p, ecs_quat *q, ecs_vec3 *s)
{
    ecs_vec3 c0 = ecs_vec3_make(m->m[0], m->m[1], m->m[2]);
    ecs_vec3 c1 = ecs_vec3_make(m->m[4], m->m[5], m->m[6]);
    ecs_vec3 c2 = ecs_vec3_make(m->m[8], m->m[9], m->m[10]);
    *p = ecs_vec3_make(m->m[12], m->m[13], m->m[14]);
    *s = ecs_vec3_make(sqrtf(ecs_vec3_dot(c0, c0)), sqrtf(ecs_vec3_dot(c1, c1)),
                       sqrtf(ecs_vec3_dot(c2, c2)));
    if (ecs_vec3_dot(c0, ecs_vec3_cross(c1, c2)) < 0.0f) { /* a mirror: flip x */
        s->x = -s->x;
        c0 = ecs_vec3_make(-c0.x, -c0.y, -c0.z);
    }
    ecs_vec3 x = ecs_vec3_normalize_or(
        c0, ecs_vec3_normalize_or(ecs_vec3_cross(c1, c2), ecs_vec3_make(1, 0, 0)));
    float d = ecs_vec3_dot(c1, x);
    ecs_vec3 y1 = ecs_vec3_make(c1.x - d * x.x, c1.y - d * x.y, c1.z - d * x.z);
    ecs_vec3 other = fabsf(x.x) < 0.9f ? ecs_vec3_make(1, 0, 0) : ecs_vec3_make(0, 1, 0);
    ecs_vec3 y = ecs_vec3_normalize_or(
        y1, ecs_vec3_normalize_or(ecs_vec3_cross(c2, x), ecs_vec3_cross(x, other)));
    y = ecs_vec3_normalize_or(y, ecs_vec3_make(0, 1, 0));
    *q = ecs_quat_from_axes(x, y, ecs_vec3_cross(x, y));
}

#ifdef __cplusplus
}
#endif

#endif /* ECS_MATH_H */
