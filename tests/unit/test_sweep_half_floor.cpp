// The floor under a sweep's raw half-widths: the median of the positive, finite halves of the
// origin's raw intervals (checked against a sort in the test), and intervals widened to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "forecast/sweep_half_floor.hpp"

namespace {

using hpt::forecast::Interval;

double sorted_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TEST(SweepHalfFloor, MedianOfTheHalvesMatchesASort) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(0.0, 2.0);
  for (int runs : {1, 2, 3, 10, 101}) {
    std::vector<Interval> raws;
    std::vector<double> halves;
    for (int r = 0; r < runs; ++r) {
      const double mid = u(gen) - 1.0, lo = u(gen), hi = u(gen);
      raws.push_back({mid - lo, mid, mid + hi});
      halves.push_back(lo), halves.push_back(hi);
    }
    EXPECT_NEAR(hpt::forecast::median_half_width(raws), sorted_median(halves), 1e-12) << runs;
  }
}

TEST(SweepHalfFloor, HalvesWithoutWidthOrValueDoNotCount) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Halves 0.5, 0 (left out), 1.0, NaN (left out), 3.0: the median of 0.5, 1.0 and 3.0.
  const std::vector<Interval> raws{{0.5, 1.0, 1.0}, {-1.0, 0.0, nan}, {2.0, 2.0, 5.0}};
  EXPECT_DOUBLE_EQ(hpt::forecast::median_half_width(raws), 1.0);
  EXPECT_DOUBLE_EQ(hpt::forecast::median_half_width({{1.0, 1.0, 1.0}}), 0.0);
  EXPECT_DOUBLE_EQ(hpt::forecast::median_half_width({}), 0.0);
}

TEST(SweepHalfFloor, FlooredHalvesWidenOnlyTheNarrowOnes) {
  const Interval iv = hpt::forecast::with_floored_halves({0.9, 1.0, 3.0}, 0.5);
  EXPECT_DOUBLE_EQ(iv.lo, 0.5);  // 0.1 raised to the floor
  EXPECT_DOUBLE_EQ(iv.mid, 1.0);
  EXPECT_DOUBLE_EQ(iv.hi, 3.0);  // 2.0 kept
  const Interval same = hpt::forecast::with_floored_halves({0.9, 1.0, 3.0}, 0.0);
  EXPECT_DOUBLE_EQ(same.lo, 0.9);
  EXPECT_DOUBLE_EQ(same.hi, 3.0);
}
