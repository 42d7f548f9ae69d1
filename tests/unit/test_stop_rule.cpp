// The stop list's group leaders (lowest and second-lowest level, the best other run of each run)
// and the median of the other runs' levels, against a plain loop over every run of random groups
// with ties; and the verdict of both stop rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "forecast/curve_study.hpp"
#include "forecast/stop_rule.hpp"

namespace {

using hpt::forecast::Leaders;
using hpt::forecast::StopRule;

// The median of `levels` without entry r, by copying, erasing and sorting.
double median_without(std::vector<double> levels, std::size_t r) {
  levels.erase(levels.begin() + long(r));
  std::sort(levels.begin(), levels.end());
  const std::size_t n = levels.size();
  return n % 2 == 1 ? levels[n / 2] : 0.5 * (levels[n / 2 - 1] + levels[n / 2]);
}

TEST(StopRule, LeadersAndMedianOfOthersMatchALoop) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 2 + std::size_t(trial % 9);
    std::vector<double> level(n);
    // Few distinct values, so that ties are common.
    for (double& v : level) v = double(std::uniform_int_distribution<int>(0, 4)(rng)) * 0.25;
    Leaders l;
    for (std::size_t q = 0; q < n; ++q) l.add(int(q), level[q]);
    l.finish();
    for (std::size_t r = 0; r < n; ++r) {
      int first = -1;  // the lowest other level, the lower index winning a tie
      for (std::size_t q = 0; q < n; ++q)
        if (q != r && (first < 0 || level[q] < level[std::size_t(first)])) first = int(q);
      EXPECT_EQ(l.best_other_run(int(r)), first) << "trial " << trial << " run " << r;
      EXPECT_EQ(l.best_other(int(r)), level[std::size_t(first)]);
      EXPECT_DOUBLE_EQ(l.median_other(level[r]), median_without(level, r));
    }
  }
}

TEST(StopRule, NanLevelsAreLeftOutAndOneLevelHasNoMedian) {
  Leaders l;
  l.add(0, std::nan(""));
  l.add(1, 0.5);
  l.finish();
  EXPECT_EQ(l.best_run, 1);
  EXPECT_TRUE(std::isnan(l.median_other(0.5)));
  EXPECT_TRUE(std::isnan(l.median_other(0.25)));  // a level never added
}

TEST(StopRule, VerdictOfEitherRule) {
  const double nan = std::nan("");
  EXPECT_TRUE(hpt::forecast::stop_verdict(StopRule::kProbability, 0.05, 0.1, 1.0, 0.0));
  EXPECT_FALSE(hpt::forecast::stop_verdict(StopRule::kProbability, 0.2, 0.1, 1.0, 0.0));
  EXPECT_TRUE(hpt::forecast::stop_verdict(StopRule::kMedian, 0.2, 0.1, 1.0, 0.5));
  EXPECT_FALSE(hpt::forecast::stop_verdict(StopRule::kMedian, 0.2, 0.1, 0.5, 0.5));
  EXPECT_FALSE(hpt::forecast::stop_verdict(StopRule::kMedian, 0.2, 0.1, 1.0, nan));
}

}  // namespace
