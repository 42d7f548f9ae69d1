#pragma once
// Counter-based random numbers: a value is a pure function of (seed, stream, counter), so a rollout
// draws identical samples on every backend and thread count (docs/method.md#random-numbers).
// splitmix64 finaliser mixing.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/math.hpp"

namespace hpt::rng {

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Key of one draw: seed, then up to four coordinates (e.g. scenario, member, step, index).
KOKKOS_INLINE_FUNCTION std::uint64_t key(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                                         std::uint64_t c = 0, std::uint64_t d = 0) {
  std::uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (a + 0x9e3779b97f4a7c15ULL));
  h = mix64(h ^ (b + 0x632be59bd9b4e019ULL));
  h = mix64(h ^ (c + 0x85157af5ULL));
  h = mix64(h ^ (d + 0x2545f4914f6cdd1dULL));
  return h;
}

// Uniform in (0, 1): 53 random bits, never exactly 0 or 1.
KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t k) {
  return (double(k >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from two independent counters derived from k.
KOKKOS_INLINE_FUNCTION double normal(std::uint64_t k) {
  const double u1 = uniform(mix64(k ^ 0x243f6a8885a308d3ULL));
  const double u2 = uniform(mix64(k ^ 0x13198a2e03707344ULL));
  return math::sqrt(-2.0 * math::log(u1)) * math::cos(6.283185307179586 * u2);
}

}  // namespace hpt::rng
