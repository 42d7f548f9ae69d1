#pragma once
// A fixed number of double sums reduced in one parallel_reduce (Kokkos "built-in reducer with a
// custom scalar type"), so one pass over a buffer yields several statistics at once.
#include <Kokkos_Core.hpp>

namespace hpt {

template <int N>
struct SumArray {
  double v[N];

  KOKKOS_INLINE_FUNCTION SumArray() {
    for (int i = 0; i < N; ++i) v[i] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION SumArray(const SumArray& o) {
    for (int i = 0; i < N; ++i) v[i] = o.v[i];
  }
  KOKKOS_INLINE_FUNCTION SumArray& operator=(const SumArray& o) {
    for (int i = 0; i < N; ++i) v[i] = o.v[i];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION SumArray& operator+=(const SumArray& o) {
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  // Kokkos 3.x joins through volatile references on some backends.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile SumArray& o) volatile {
    for (int i = 0; i < N; ++i) v[i] += o.v[i];
  }
#endif
};

}  // namespace hpt

namespace Kokkos {
template <int N>
struct reduction_identity<hpt::SumArray<N>> {
  KOKKOS_FORCEINLINE_FUNCTION static hpt::SumArray<N> sum() { return hpt::SumArray<N>(); }
};
}  // namespace Kokkos
