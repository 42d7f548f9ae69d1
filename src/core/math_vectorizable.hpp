#pragma once
// exp, the logistic sigmoid and tanh without branches or library calls, so that a host compiler
// vectorises the loops that call them (libm's expf and tanhf are scalar calls, which cost a GEMM-
// shaped GRU step on the CPU as much as its products). GCC vectorises them only where it may
// assume that floating-point operations do not trap: the CPU build passes -fno-trapping-math. Float
// only: a double argument goes to the library functions of math.hpp. Accuracy in float: exp within
// 2 ulp on [-87, 88] (below, the smallest normal float); sigmoid and tanh within 2e-7 absolute
// (docs/method.md#gru-cell).
#include <cstdint>
#include <cstring>

#include "core/math.hpp"  // exp, tanh for double

namespace hpt::math {

namespace detail {

// exp(x) for float: x = n ln 2 + r with |r| <= ln 2 / 2, exp(r) by its Taylor polynomial to r^7
// (truncation 5e-9 relative), 2^n put into the exponent bits. n is rounded by adding and
// subtracting 1.5 * 2^23 (exact without -ffast-math's reassociation, which hpt never uses).
KOKKOS_INLINE_FUNCTION float exp_float_vectorizable(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float shifter = 12582912.0f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // ln 2 = 0.693359375 - 2.12e-4
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t bits = (std::int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
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

}  // namespace hpt::math
