#pragma once
// A Kokkos reducer over a fixed number of doubles, some summed, some minimised, some maximised, so
// a team reads a history once and gets every statistic of a group from one nested parallel_reduce
// (Kokkos 3.4 has no variadic reducers for nested policies).
#include <Kokkos_Core.hpp>

namespace hpt::reduce {

// +infinity and NaN in host and device code (no numeric_limits in device code without relaxed
// constexpr).
KOKKOS_INLINE_FUNCTION double infinity() {
  return __builtin_huge_val();
}
KOKKOS_INLINE_FUNCTION double quiet_nan() {
  return __builtin_nan("");
}

template <int N>
struct Values {
  double v[N];
};

// Slots [0, NSum) are summed, [NSum, NSum + NMin) take the minimum, the last NMax the maximum.
// Min/max slots compare with < and >, so callers map NaN to +inf/-inf first when NaN must be
// ignored.
template <int NSum, int NMin, int NMax, class Space = Kokkos::HostSpace>
struct MultiReducer {
  static constexpr int kSize = NSum + NMin + NMax;
  using reducer = MultiReducer;
  using value_type = Values<kSize>;
  using result_view_type = Kokkos::View<value_type, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  KOKKOS_INLINE_FUNCTION explicit MultiReducer(value_type& value) : value_(&value) {}

  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const {
    for (int i = 0; i < NSum; ++i) dest.v[i] += src.v[i];
    for (int i = NSum; i < NSum + NMin; ++i)
      if (src.v[i] < dest.v[i]) dest.v[i] = src.v[i];
    for (int i = NSum + NMin; i < kSize; ++i)
      if (src.v[i] > dest.v[i]) dest.v[i] = src.v[i];
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest,
                                   const volatile value_type& src) const {
    for (int i = 0; i < NSum; ++i) dest.v[i] += src.v[i];
    for (int i = NSum; i < NSum + NMin; ++i)
      if (src.v[i] < dest.v[i]) dest.v[i] = src.v[i];
    for (int i = NSum + NMin; i < kSize; ++i)
      if (src.v[i] > dest.v[i]) dest.v[i] = src.v[i];
  }
#endif

  KOKKOS_INLINE_FUNCTION void init(value_type& val) const {
    for (int i = 0; i < NSum; ++i) val.v[i] = 0.0;
    for (int i = NSum; i < NSum + NMin; ++i) val.v[i] = infinity();
    for (int i = NSum + NMin; i < kSize; ++i) val.v[i] = -infinity();
  }

  KOKKOS_INLINE_FUNCTION value_type& reference() const {
    return *value_.data();
  }
  KOKKOS_INLINE_FUNCTION result_view_type view() const {
    return value_;
  }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const {
    return true;
  }

 private:
  result_view_type value_;
};

}  // namespace hpt::reduce
