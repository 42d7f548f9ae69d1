// The stop list's group leaders (lowest and second-lowest level, the best other run of each run)
// and the median and quantiles of the other runs' levels, against a plain loop over every run of
// random groups with ties; and the verdict of the three stop rules.
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

// The p quantile of `levels` without entry r, linear between order statistics (numpy's default):
// the value at position p * (n - 1) of the n others sorted.
double quantile_without(std::vector<double> levels, std::size_t r, double p) {
  levels.erase(levels.begin() + long(r));
  std::sort(levels.begin(), levels.end());
  const double h = p * double(levels.size() - 1);
  const std::size_t lo = std::size_t(h);
  const double next = lo + 1 < levels.size() ? levels[lo + 1] : levels[lo];
  return levels[lo] * (1.0 - (h - double(lo))) + next * (h - double(lo));
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
      for (const double p : {0.0, 0.25, 0.4, 0.5, 0.9, 1.0})
        EXPECT_NEAR(l.quantile_other(level[r], p), quantile_without(level, r, p), 1e-15)
            << "trial " << trial << " run " << r << " p " << p;
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
  EXPECT_TRUE(std::isnan(l.quantile_other(0.5, 0.4)));
}

// At p = 0.5 the quantile of the others is their median.
TEST(StopRule, HalfQuantileIsTheMedian) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    Leaders l;
    std::vector<double> level(3 + std::size_t(trial % 6));
    for (double& v : level) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    for (std::size_t q = 0; q < level.size(); ++q) l.add(int(q), level[q]);
    l.finish();
    for (const double v : level) EXPECT_NEAR(l.quantile_other(v, 0.5), l.median_other(v), 1e-15);
  }
}

hpt::forecast::StopEvidence evidence(double probability, double final_mid, double others_median,
                                     double final_quantile = 0, double level = 0,
                                     double level_quantile = 0) {
  return {probability, final_mid, others_median, final_quantile, level, level_quantile};
}

TEST(StopRule, VerdictOfEachRule) {
  using hpt::forecast::stop_verdict;
  const double nan = std::nan("");
  EXPECT_TRUE(stop_verdict(StopRule::kProbability, evidence(0.05, 1.0, 0.0), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kProbability, evidence(0.2, 1.0, 0.0), 0.1));
  EXPECT_TRUE(stop_verdict(StopRule::kMedian, evidence(0.2, 1.0, 0.5), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kMedian, evidence(0.2, 0.5, 0.5), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kMedian, evidence(0.2, 1.0, nan), 0.1));
  // both: above the others' quantile on the forecast and on the level, whatever the probability.
  EXPECT_TRUE(stop_verdict(StopRule::kBoth, evidence(0.9, 1.0, 2.0, 0.5, 0.3, 0.2), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kBoth, evidence(0.0, 1.0, 0.0, 0.5, 0.2, 0.2), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kBoth, evidence(0.0, 0.5, 0.0, 0.5, 0.3, 0.2), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kBoth, evidence(0.0, 1.0, 0.0, nan, 0.3, 0.2), 0.1));
  EXPECT_FALSE(stop_verdict(StopRule::kBoth, evidence(0.0, 1.0, 0.0, 0.5, 0.3, nan), 0.1));
}

}  // namespace
