// Counter-based draws (core/rng.hpp) against independent forms: the key split into its prefix and
// last coordinate equals the whole key, and so do a rollout's draws; normal equals Box-Muller in
// long double within a few ulp of its radius, and the C library's double form bit for bit once
// rounded to float on nearly every draw; a million draws have the moments and tail of a standard
// normal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "core/rng.hpp"
#include "kernels/rollout_draws.hpp"

namespace {

TEST(Rng, KeySplitsIntoPrefixAndLast) {
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t seed = hpt::rng::mix64(i), a = i % 7, b = i / 7, c = i * 31, d = i % 33;
    EXPECT_EQ(hpt::rng::key(seed, a, b, c, d),
              hpt::rng::key_last(hpt::rng::key_prefix(seed, a, b, c), d));
  }
}

// A rollout's draws (its key's prefix mixed once) are the whole key's draws, bit for bit.
TEST(Rng, RolloutDrawsAreTheWholeKeysDraws) {
  for (int n = 0; n < 40; n += 3)
    for (int m = 0; m < 5; ++m) {
      const hpt::detail::RolloutDraws draws(977, n, m, n + m);
      for (int i = 0; i < 33; ++i)
        EXPECT_EQ(draws(i), hpt::rng::normal(hpt::rng::key(977, n, m, n + m, i)));
    }
}

double uniform(const std::uint64_t v) {
  return (double(v >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double library_normal(const std::uint64_t k) {
  const double u1 = uniform(hpt::rng::mix64(k ^ 0x243f6a8885a308d3ULL));
  const double u2 = uniform(hpt::rng::mix64(k ^ 0x13198a2e03707344ULL));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Box-Muller in long double: the radius and the value.
std::pair<long double, long double> precise_normal(const std::uint64_t k) {
  const long double u1 = uniform(hpt::rng::mix64(k ^ 0x243f6a8885a308d3ULL));
  const long double u2 = uniform(hpt::rng::mix64(k ^ 0x13198a2e03707344ULL));
  const long double r = std::sqrt(-2.0L * std::log(u1));
  return {r, r * std::cos(6.283185307179586476925286766559L * u2)};
}

TEST(Rng, NormalIsBoxMullerWithinUlps) {
  constexpr int n = 1000000;
  int float_differs = 0;
  double worst = 0, sum = 0, sum2 = 0;
  int tail = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t k = hpt::rng::key(7, std::uint64_t(i));
    const double x = hpt::rng::normal(k);
    const auto [r, want] = precise_normal(k);
    worst = std::fmax(worst, double(std::fabs(x - want) / std::fmax(r, 1.0L)));
    float_differs += float(x) != float(library_normal(k));
    sum += x;
    sum2 += x * x;
    tail += std::fabs(x) > 1.959963984540054;
  }
  EXPECT_LE(worst, 8e-16);
  EXPECT_LE(float_differs, 2);
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_LT(std::fabs(mean), 5.0 / std::sqrt(double(n)));
  EXPECT_LT(std::fabs(var - 1.0), 5.0 * std::sqrt(2.0 / n));
  EXPECT_LT(std::fabs(double(tail) / n - 0.05), 5.0 * std::sqrt(0.05 * 0.95 / n));
}

}  // namespace
