#pragma once
// The random draws of one rollout step (docs/method.md#ensemble-rollout): counter-based normals
// (core/rng.hpp) keyed by (seed, scenario, member, step, index), so every rollout kernel draws the
// same numbers for a path whatever its mapping, backend or thread count.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/rng.hpp"

namespace hpt {
namespace detail {

// Step k of path (scenario n, member m): draw i < S is the prior sample's eps_i, draw S the loss
// change's. The key's part from (seed, n, m, k) is mixed once, not per draw.
struct RolloutDraws {
  std::uint64_t prefix;
  KOKKOS_INLINE_FUNCTION RolloutDraws(const std::uint64_t seed, const int n, const int m,
                                      const int k)
      : prefix(rng::key_prefix(seed, std::uint64_t(n), std::uint64_t(m), std::uint64_t(k))) {}
  KOKKOS_INLINE_FUNCTION double operator()(const int i) const {
    return rng::normal(rng::key_last(prefix, std::uint64_t(i)));
  }
};

}  // namespace detail
}  // namespace hpt
