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
// change's.
struct RolloutDraws {
  std::uint64_t seed;
  int n, m, k;
  KOKKOS_INLINE_FUNCTION double operator()(const int i) const {
    return rng::normal(rng::key(seed, n, m, k, i));
  }
};

}  // namespace detail
}  // namespace hpt
