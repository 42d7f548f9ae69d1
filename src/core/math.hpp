#pragma once
// The one place that maps math functions to Kokkos 3.4 (Kokkos::Experimental::) or 4.x (Kokkos::).
#include <Kokkos_Core.hpp>

#if KOKKOS_VERSION >= 40000
#define HPT_KMATH Kokkos
#else
#define HPT_KMATH Kokkos::Experimental
#endif

namespace hpt::math {

template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) {
  return HPT_KMATH::exp(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T log(T x) {
  return HPT_KMATH::log(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T log10(T x) {
  return HPT_KMATH::log10(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T log1p(T x) {
  return HPT_KMATH::log1p(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) {
  return HPT_KMATH::sqrt(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T tanh(T x) {
  return HPT_KMATH::tanh(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T fabs(T x) {
  return HPT_KMATH::fabs(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T cos(T x) {
  return HPT_KMATH::cos(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T sin(T x) {
  return HPT_KMATH::sin(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T pow(T x, T y) {
  return HPT_KMATH::pow(x, y);
}
template <class T>
KOKKOS_INLINE_FUNCTION T fmin(T x, T y) {
  return HPT_KMATH::fmin(x, y);
}
template <class T>
KOKKOS_INLINE_FUNCTION T fmax(T x, T y) {
  return HPT_KMATH::fmax(x, y);
}
template <class T>
KOKKOS_INLINE_FUNCTION bool isnan(T x) {
  return HPT_KMATH::isnan(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION bool isfinite(T x) {
  return HPT_KMATH::isfinite(x);
}

template <class T>
KOKKOS_INLINE_FUNCTION T min(T a, T b) {
  return a < b ? a : b;
}
template <class T>
KOKKOS_INLINE_FUNCTION T max(T a, T b) {
  return a < b ? b : a;
}
template <class T>
KOKKOS_INLINE_FUNCTION T clamp(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Stable logistic sigmoid: branch on the sign so exp never overflows (docs/method.md#gru-cell).
template <class T>
KOKKOS_INLINE_FUNCTION T sigmoid(T x) {
  if (x >= T(0)) {
    const T e = exp(-x);
    return T(1) / (T(1) + e);
  }
  const T e = exp(x);
  return e / (T(1) + e);
}

// softplus(x) = log(1 + e^x) without overflow.
template <class T>
KOKKOS_INLINE_FUNCTION T softplus(T x) {
  return x > T(0) ? x + log1p(exp(-x)) : log1p(exp(x));
}

}  // namespace hpt::math
