#pragma once
// A reduction of a multi-value sum (kernels/sum_array.hpp) over a long range whose per-thread
// partial sums live in registers. Kokkos' CUDA range reduction keeps each thread's accumulator in
// shared memory, and an accumulator of several doubles per element then costs bank-conflicted
// shared-memory traffic well beyond the range's own reads and writes; here each work item sums a
// slice of the range into a local value and joins the reduction once.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>

#include "core/launcher.hpp"

namespace hpt {

// Work items of a register reduction over n elements: one per resident thread on a device (a
// strided slice each, so that neighbouring threads read neighbouring elements), a few per host
// thread (a contiguous slice each, for the caches).
template <class Space>
struct RegisterReducePlan {
  static constexpr bool host_order =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  std::int64_t items = 0;
  std::int64_t slice = 0;  // host order: elements per item

  RegisterReducePlan(const Space& space, std::int64_t n) {
    const std::int64_t threads = std::max<std::int64_t>(1, std::int64_t(space.concurrency()));
    items = std::min<std::int64_t>(n, host_order ? 8 * threads : threads);
    slice = items > 0 ? (n + items - 1) / items : 0;
  }
};

// reducer's value = sum over k in [0, n) of what term(k, acc) adds to acc; a default-constructed
// value is the sum's zero. The summation order depends on n and the space's concurrency only.
template <class Space, class Term, class Reducer>
HPT_LAUNCHER void reduce_in_registers(const Space& space, const char* label, std::int64_t n,
                                      const Term& term, const Reducer& reducer) {
  using Value = typename Reducer::value_type;
  const RegisterReducePlan<Space> plan(space, n);
  const std::int64_t items = plan.items, slice = plan.slice;
  constexpr bool host_order = RegisterReducePlan<Space>::host_order;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<Space>(space, 0, items),
      KOKKOS_LAMBDA(const std::int64_t item, Value& acc) {
        Value local;
        if (host_order) {
          const std::int64_t end = item * slice + slice < n ? item * slice + slice : n;
          for (std::int64_t k = item * slice; k < end; ++k) term(k, local);
        } else {
          for (std::int64_t k = item; k < n; k += items) term(k, local);
        }
        acc += local;
      },
      reducer);
}

}  // namespace hpt
