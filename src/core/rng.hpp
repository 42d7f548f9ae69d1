#pragma once
// Counter-based random numbers: a value is a pure function of (seed, stream, counter), so a rollout
// draws identical samples on every backend and thread count (docs/method.md#random-numbers).
// splitmix64 finaliser mixing.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/math.hpp"
#include "core/math_vectorizable.hpp"

namespace hpt::rng {

KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The part of a key made from the seed and the first three coordinates, shared by the draws that
// differ only in the last (key_last).
KOKKOS_INLINE_FUNCTION std::uint64_t key_prefix(std::uint64_t seed, std::uint64_t a,
                                                std::uint64_t b, std::uint64_t c) {
  std::uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = mix64(h ^ (a + 0x9e3779b97f4a7c15ULL));
  h = mix64(h ^ (b + 0x632be59bd9b4e019ULL));
  return mix64(h ^ (c + 0x85157af5ULL));
}
KOKKOS_INLINE_FUNCTION std::uint64_t key_last(std::uint64_t prefix, std::uint64_t d) {
  return mix64(prefix ^ (d + 0x2545f4914f6cdd1dULL));
}

// Key of one draw: seed, then up to four coordinates (e.g. scenario, member, step, index).
KOKKOS_INLINE_FUNCTION std::uint64_t key(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                                         std::uint64_t c = 0, std::uint64_t d = 0) {
  return key_last(key_prefix(seed, a, b, c), d);
}

// Uniform in (0, 1): 53 random bits, never exactly 0 or 1.
KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t k) {
  return (math::uint53_to_double(k >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from two independent counters derived from k. log and cos are
// hpt's branch-free forms (within 2 ulp of the C library's), so a host loop of draws vectorises
// and every backend computes the same polynomial.
KOKKOS_INLINE_FUNCTION double normal(std::uint64_t k) {
  const double u1 = uniform(mix64(k ^ 0x243f6a8885a308d3ULL));
  const double u2 = uniform(mix64(k ^ 0x13198a2e03707344ULL));
  return math::sqrt(-2.0 * math::log_vectorizable(u1)) * math::cos_2pi_vectorizable(u2);
}

}  // namespace hpt::rng
