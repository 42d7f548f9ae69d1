#pragma once
// exp, the logistic sigmoid, tanh, log, log1p, softplus and cos(2 pi t) without branches or
// library calls, so that a host compiler vectorises the loops that call them (libm's are scalar
// calls, which cost a GEMM-shaped rollout step on the CPU as much as its products). GCC vectorises
// them only where it may assume that floating-point operations do not trap and that math functions
// need not set errno: the CPU build passes -fno-trapping-math and -fno-math-errno.
// exp, sigmoid, tanh: float only (a double argument goes to the library functions of math.hpp);
// exp within 2 ulp on [-87, 88] (below, the smallest normal float), sigmoid and tanh within 2e-7
// absolute (docs/method.md#gru-cell). log and log1p in float and double, cos_2pi in double,
// softplus in float (in double it calls the library's exp): within 2 ulp of the library's
// (docs/method.md#random-numbers).
#include <cstdint>
#include <cstring>

#include "core/math.hpp"  // exp, tanh for double

namespace hpt::math {

namespace detail {

KOKKOS_INLINE_FUNCTION std::uint64_t bits_of(const double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}
KOKKOS_INLINE_FUNCTION std::uint32_t bits_of(const float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}
KOKKOS_INLINE_FUNCTION double double_of(const std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}
KOKKOS_INLINE_FUNCTION float float_of(const std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}

// c[0] z^(n-1) + c[1] z^(n-2) + ... + c[n-1], by Horner's rule.
template <class T, int N>
KOKKOS_INLINE_FUNCTION T horner(const T z, const T (&c)[N]) {
  T p = c[0];
  for (int i = 1; i < N; ++i) p = p * z + c[i];
  return p;
}

// log m for m in [sqrt(1/2), sqrt(2)): 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.1716, by its
// odd series (to s^21 in double, s^11 in float: truncation below a quarter ulp).
template <class T>
KOKKOS_INLINE_FUNCTION T log_reduced(const T m) {
  const T f = m - T(1);
  const T s = f / (T(2) + f);
  const T z = s * s;
  T p;
  if constexpr (sizeof(T) == 8) {
    const T c[] = {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                   1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
    p = horner(z, c);
  } else {
    const T c[] = {T(1.0 / 11), T(1.0 / 9), T(1.0 / 7), T(1.0 / 5), T(1.0 / 3)};
    p = horner(z, c);
  }
  return T(2) * s + T(2) * s * z * p;
}

// exp(x) for float: x = n ln 2 + r with |r| <= ln 2 / 2, exp(r) by its Taylor polynomial to r^7
// (truncation 5e-9 relative), 2^n put into the exponent bits. n is rounded by adding and
// subtracting 1.5 * 2^23 (exact without -ffast-math's reassociation, which hpt never uses).
KOKKOS_INLINE_FUNCTION float exp_float_vectorizable(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float shifter = 12582912.0f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln 2 = 0.693359375 - 2.12e-4
  const float c[] = {1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f,
                     1.0f / 6.0f,    0.5f,          1.0f,          1.0f};
  const float scale = float_of(std::uint32_t(std::int32_t(n) + 127) << 23);  // 2^n
  return horner(r, c) * scale;
}

}  // namespace detail

template <class T>
KOKKOS_INLINE_FUNCTION T exp_vectorizable(T x) {
  if constexpr (sizeof(T) == 4) {
    return detail::exp_float_vectorizable(x);
  } else {
    return exp(x);
  }
}

// 1 / (1 + e^-x) from e = e^-|x|: s = 1 / (1 + e) for x >= 0, e s otherwise (never overflows).
template <class T>
KOKKOS_INLINE_FUNCTION T sigmoid_vectorizable(T x) {
  const T e = exp_vectorizable(x < T(0) ? x : -x);
  const T s = T(1) / (T(1) + e);
  const T es = e * s;
  return x < T(0) ? es : s;
}

// tanh |x| = 1 - 2 / (e^{2|x|} + 1), with the sign of x; below |x| = 0.25 its odd Taylor series
// to x^11 (truncation 2e-10), where the exponential form would lose relative accuracy.
template <class T>
KOKKOS_INLINE_FUNCTION T tanh_vectorizable(T x) {
  if constexpr (sizeof(T) == 4) {
    const T a = x < T(0) ? -x : x;
    const T big = T(1) - T(2) / (exp_vectorizable(T(2) * a) + T(1));
    const T a2 = a * a;
    T p = T(-1382.0 / 155925.0);
    p = p * a2 + T(62.0 / 2835.0);
    p = p * a2 + T(-17.0 / 315.0);
    p = p * a2 + T(2.0 / 15.0);
    p = p * a2 + T(-1.0 / 3.0);
    const T small = a + a * a2 * p;
    const T t = a < T(0.25) ? small : big;
    return x < T(0) ? -t : t;
  } else {
    return tanh(x);
  }
}

// An integer below 2^53 as a double, exactly (the value of double(n)), from its two halves put
// into the mantissa of 2^52: AVX2 has no instruction that converts 64-bit integer lanes.
KOKKOS_INLINE_FUNCTION double uint53_to_double(const std::uint64_t n) {
  const double two52 = 4503599627370496.0;
  const double high = detail::double_of(0x4330000000000000ULL | (n >> 21)) - two52;
  const double low = detail::double_of(0x4330000000000000ULL | (n & 0x1FFFFFULL)) - two52;
  return high * 2097152.0 + low;
}

// log x for a positive normal x (no zero, subnormal, infinity or NaN): x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), log x = e ln 2 + log m, ln 2 split so that e times its high part is exact.
template <class T>
KOKKOS_INLINE_FUNCTION T log_vectorizable(const T x) {
  if constexpr (sizeof(T) == 8) {
    const std::uint64_t b = detail::bits_of(x);
    const double m1 = detail::double_of((b & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);
    const bool high = m1 > 1.4142135623730951;
    const std::uint64_t biased = (b >> 52) + (high ? 1 : 0);
    const double e =
        detail::double_of(0x4330000000000000ULL | biased) - 4503599627370496.0 - 1023.0;
    const double lm = detail::log_reduced(high ? 0.5 * m1 : m1);
    return e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + lm);
  } else {
    const std::uint32_t b = detail::bits_of(x);
    const float m1 = detail::float_of((b & 0x007FFFFFU) | 0x3F800000U);
    const bool high = m1 > 1.41421356f;
    const std::uint32_t biased = (b >> 23) + (high ? 1U : 0U);
    const float e = detail::float_of(0x4B000000U | biased) - 8388608.0f - 127.0f;
    const float lm = detail::log_reduced(high ? 0.5f * m1 : m1);
    return e * 0.693359375f + (e * -2.12194440e-4f + lm);
  }
}

// log(1 + x) for x >= 0: log u of u = 1 + x (rounded), corrected by the rounding error of u.
template <class T>
KOKKOS_INLINE_FUNCTION T log1p_vectorizable(const T x) {
  const T u = T(1) + x;
  return log_vectorizable(u) + (x - (u - T(1))) / u;
}

// softplus(x) = max(x, 0) + log(1 + e^-|x|), the form of math::softplus; in float e^-|x| is
// clamped at the smallest normal float, so softplus(x) for x < -87 is 1.6e-38, not smaller.
template <class T>
KOKKOS_INLINE_FUNCTION T softplus_vectorizable(const T x) {
  const T a = x < T(0) ? -x : x;
  const T e = exp_vectorizable(-a);
  return (x > T(0) ? x : T(0)) + log1p_vectorizable(e);
}

// cos(2 pi t) for |t| < 2^50: t = q / 4 + r with q the nearest integer to 4 t and |r| <= 1/8 (both
// exact), so 2 pi r is in [-pi/4, pi/4], where the Taylor series of cos (to the 16th power) and sin
// (to the 17th) are within a quarter ulp; q mod 4 picks cos, -sin, -cos or sin.
KOKKOS_INLINE_FUNCTION double cos_2pi_vectorizable(const double t) {
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double q = (4.0 * t + shifter) - shifter;
  const double th = (t - 0.25 * q) * 6.283185307179586;
  const double z = th * th;
  const double cos_c[] = {1.0 / 20922789888000.0,
                          -1.0 / 87178291200.0,
                          1.0 / 479001600.0,
                          -1.0 / 3628800.0,
                          1.0 / 40320.0,
                          -1.0 / 720.0,
                          1.0 / 24.0,
                          -0.5,
                          1.0};
  const double sin_c[] = {
      1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0,
      1.0 / 362880.0,          -1.0 / 5040.0,          1.0 / 120.0,        -1.0 / 6.0};
  const double c = detail::horner(z, cos_c);
  const double s = th + th * z * detail::horner(z, sin_c);
  const std::uint64_t quadrant = detail::bits_of(q + 4503599627370496.0) & 3;  // q mod 4
  const double v = (quadrant & 1) != 0 ? s : c;
  return ((quadrant + 1) & 2) != 0 ? -v : v;  // quadrants 1 and 2
}

}  // namespace hpt::math
