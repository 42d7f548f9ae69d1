// Adaptive conformal calibration of the forecast intervals: on synthetic streams whose raw
// intervals are far too narrow or far too wide, the realised coverage converges near 0.90 with
// both rules; the quantile rule gets there within the first hundred targets, even when each
// target is known only several forecasts after it was made; its width factor is the order
// statistic of the newest scores that the rule names, recomputed here with a plain sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

#include "forecast/adaptive_conformal.hpp"

namespace {

using hpt::forecast::AdaptiveConformal;
using hpt::forecast::CalibrationRule;
using hpt::forecast::conformal_score;

// A stream of `n` targets ~ N(0, truth_sd^2) whose raw forecast interval is the N(0, 1) 90 %
// interval (+-1.645); each target becomes known `delay` forecasts after its interval was issued
// (as a horizon-h forecast made every h / delay steps). Returns the coverage of targets
// [from, n).
double coverage(double truth_sd, int n, int delay, int from, AdaptiveConformal& aci,
                unsigned seed = 7) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(0.0, truth_sd);
  struct Issued {
    double lo, hi, y;
  };
  std::deque<Issued> waiting;
  int inside = 0, counted = 0, resolved = 0;
  for (int i = 0; i < n + delay; ++i) {
    if (i < n) {
      const auto iv = aci.apply(0, -1.645, 0.0, 1.645);
      waiting.push_back({iv.lo, iv.hi, z(gen)});
    }
    if (int(waiting.size()) > delay || i >= n) {
      const Issued f = waiting.front();
      waiting.pop_front();
      const bool in = f.y >= f.lo && f.y <= f.hi;
      aci.update(0, in, conformal_score(f.y, -1.645, 0.0, 1.645));
      if (resolved++ >= from) {
        inside += in;
        ++counted;
      }
    }
  }
  return double(inside) / counted;
}

TEST(ForecastCalibration, BothRulesConvergeNearNinetyPercent) {
  for (const CalibrationRule rule : {CalibrationRule::kQuantile, CalibrationRule::kScale})
    for (double sd : {0.2, 3.0, 10.0}) {
      SCOPED_TRACE(testing::Message() << "rule " << int(rule) << " sd " << sd);
      AdaptiveConformal aci(1, rule, 0.90, 0.02, 500);
      EXPECT_NEAR(coverage(sd, 20000, 0, 10000, aci), 0.90, 0.02);
      // The width factor approaches the ratio of the true to the assumed spread.
      EXPECT_NEAR(std::log(aci.width_factor(0)), std::log(sd), 0.3);
    }
}

TEST(ForecastCalibration, QuantileRuleIsCalibratedFromTheStartWithDelayedTargets) {
  // The situation of a training run: about a hundred targets per horizon, each known five
  // forecasts after it was issued, raw intervals three times too narrow (or too wide). Averaged
  // over streams, the quantile rule's coverage over all targets is within 0.85 .. 0.95; the scale
  // rule's, which needs many more targets, is not when the intervals are too narrow.
  for (double sd : {3.0, 0.3}) {
    SCOPED_TRACE(sd);
    double quantile = 0, scale = 0;
    constexpr int kStreams = 20;
    for (int s = 0; s < kStreams; ++s) {
      AdaptiveConformal q(1, CalibrationRule::kQuantile, 0.90, 0.05, 200);
      AdaptiveConformal w(1, CalibrationRule::kScale, 0.90, 0.05, 200);
      quantile += coverage(sd, 100, 5, 0, q, unsigned(100 + s)) / kStreams;
      scale += coverage(sd, 100, 5, 0, w, unsigned(100 + s)) / kStreams;
    }
    EXPECT_GE(quantile, 0.85);
    EXPECT_LE(quantile, 0.95);
    if (sd > 1) {
      EXPECT_LT(scale, 0.85);
    }
  }
}

TEST(ForecastCalibration, WithoutCorrectionTheStreamIsMiscalibrated) {
  // The same stream's raw coverage (the checks above are not vacuous): sd 3 gives ~41 %.
  std::mt19937_64 gen(7);
  std::normal_distribution<double> z(0.0, 3.0);
  int inside = 0;
  for (int i = 0; i < 20000; ++i) inside += std::fabs(z(gen)) <= 1.645;
  EXPECT_LT(inside / 20000.0, 0.5);
}

TEST(ForecastCalibration, ScoreIsTheFactorThatJustCovers) {
  EXPECT_DOUBLE_EQ(conformal_score(5.0, 1.0, 2.0, 4.0), 1.5);    // above: (5 - 2) / (4 - 2)
  EXPECT_DOUBLE_EQ(conformal_score(0.5, 1.0, 2.0, 4.0), 1.5);    // below: (2 - 0.5) / (2 - 1)
  EXPECT_DOUBLE_EQ(conformal_score(2.0, 1.0, 2.0, 4.0), 0.0);    // at the median
  EXPECT_TRUE(std::isnan(conformal_score(3.0, 2.0, 2.0, 2.0)));  // a miss without width
  EXPECT_TRUE(std::isnan(conformal_score(3.0, 1.0, 2.0, 2.0)));  // on the side without width
  EXPECT_DOUBLE_EQ(conformal_score(1.5, 1.0, 2.0, 2.0), 0.5);    // the other side has one
  EXPECT_DOUBLE_EQ(conformal_score(3.0, 1.0, 2.0, 2.0 + 1e-9), hpt::forecast::kMaxScore);
  // The interval scaled by the score has the target on its edge.
  AdaptiveConformal aci(1, CalibrationRule::kQuantile, 0.90, 0.05, 10);
  aci.update(0, false, conformal_score(5.0, 1.0, 2.0, 4.0));
  EXPECT_DOUBLE_EQ(aci.apply(0, 1.0, 2.0, 4.0).hi, 5.0);
}

TEST(ForecastCalibration, ABatchMovesTheQuantileLevelOnceByItsMissFraction) {
  // Four targets known at one step, one missed: the level moves once, by gamma (0.10 - 1/4), so
  // with 4 scores the rank is ceil(5 (1 - 0.1 + 0.05 * 0.15)) = 5 -> clamped to 4, the largest;
  // one by one, the level would move four times. The scale rule takes the four one by one.
  const std::vector<char> inside{1, 0, 1, 1};
  const std::vector<double> scores{0.5, 3.0, 0.7, 0.2};
  AdaptiveConformal q(1, CalibrationRule::kQuantile, 0.90, 0.05, 10);
  q.update_batch(0, inside, scores);
  EXPECT_EQ(q.updates(0), 4);
  EXPECT_DOUBLE_EQ(q.realised_coverage(0), 0.75);
  EXPECT_DOUBLE_EQ(q.width_factor(0), 3.0);
  EXPECT_DOUBLE_EQ(q.state(0)[0], 0.10 + 0.05 * (0.10 - 0.25));
  AdaptiveConformal w(1, CalibrationRule::kScale, 0.90, 0.05, 10), v = w;
  w.update_batch(0, inside, scores);
  for (std::size_t j = 0; j < inside.size(); ++j) v.update(0, inside[j] != 0, scores[j]);
  EXPECT_DOUBLE_EQ(w.width_factor(0), v.width_factor(0));
  EXPECT_DOUBLE_EQ(w.width_factor(0), std::exp(0.05 * (1 - 4 * 0.10)));
}

TEST(ForecastCalibration, ScaleRuleFollowsItsUpdate) {
  AdaptiveConformal aci(2, CalibrationRule::kScale, 0.90, 0.1);
  aci.update(1, false, 7.0);  // theta_1 = 0.1 * 0.9
  aci.update(1, true, 0.1);   // theta_1 = 0.09 - 0.01
  EXPECT_DOUBLE_EQ(aci.width_factor(0), 1.0);
  EXPECT_NEAR(aci.width_factor(1), std::exp(0.08), 1e-15);
  const auto iv = aci.apply(1, 1.0, 2.0, 4.0);
  EXPECT_NEAR(iv.lo, 2.0 - std::exp(0.08), 1e-14);
  EXPECT_NEAR(iv.hi, 2.0 + 2.0 * std::exp(0.08), 1e-14);
  EXPECT_DOUBLE_EQ(iv.mid, 2.0);
  EXPECT_DOUBLE_EQ(aci.realised_coverage(1), 0.5);
  EXPECT_TRUE(std::isnan(aci.realised_coverage(0)));
}

TEST(ForecastCalibration, QuantileRuleIsTheNamedOrderStatisticOfTheNewestScores) {
  constexpr int kWindow = 16;
  constexpr double kGamma = 0.03;
  AdaptiveConformal aci(1, CalibrationRule::kQuantile, 0.90, kGamma, kWindow);
  EXPECT_DOUBLE_EQ(aci.width_factor(0), 1.0);  // no score yet: the raw interval
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(0.0, 4.0);
  std::vector<double> all;
  double level = 0.10;
  for (int i = 0; i < 3 * kWindow + 5; ++i) {
    const double score = u(gen);
    const bool inside = score <= aci.width_factor(0);
    aci.update(0, inside, score);
    all.push_back(score);
    level = std::clamp(level + kGamma * (0.10 - (inside ? 0.0 : 1.0)), 0.0, 1.0);
    std::vector<double> newest(all.end() - std::min<long>(long(all.size()), kWindow), all.end());
    std::sort(newest.begin(), newest.end());
    const long n = long(newest.size());
    const long rank = std::clamp<long>(long(std::ceil((n + 1) * (1 - level) - 1e-9)), 1, n);
    // Fewer than 9 scores (the rank at 90 % beyond the sample): never below the raw interval.
    const double expected =
        n < 9 ? std::max(1.0, newest[std::size_t(rank - 1)]) : newest[std::size_t(rank - 1)];
    ASSERT_DOUBLE_EQ(aci.width_factor(0), expected) << "after " << i + 1;
  }
  EXPECT_EQ(aci.updates(0), 3 * kWindow + 5);
}

TEST(ForecastCalibration, QuantileRuleNeverNarrowsTheRawIntervalBeforeNineScores) {
  // Every target lands at half the raw half-width: the scores say "narrow by half", but a sample
  // of fewer than (1 - 0.1) / 0.1 = 9 scores cannot place the 90 % quantile, so the raw interval
  // stays; the ninth score makes the order statistic (the largest, 0.5) the factor.
  AdaptiveConformal aci(1, CalibrationRule::kQuantile, 0.90, 0.05, 50);
  EXPECT_EQ(aci.cold_start_scores(), 9);
  for (int i = 1; i <= 8; ++i) {
    aci.update(0, true, 0.5);
    ASSERT_DOUBLE_EQ(aci.width_factor(0), 1.0) << "after " << i;
  }
  aci.update(0, true, 0.5);
  EXPECT_DOUBLE_EQ(aci.width_factor(0), 0.5);
  // Widening is not held back: one score of 3 before the ninth widens at once.
  AdaptiveConformal wide(1, CalibrationRule::kQuantile, 0.90, 0.05, 50);
  wide.update(0, false, 3.0);
  EXPECT_DOUBLE_EQ(wide.width_factor(0), 3.0);
  // At 95 % coverage the sample must hold 19 scores.
  EXPECT_EQ(AdaptiveConformal(1, CalibrationRule::kQuantile, 0.95).cold_start_scores(), 19);
}

TEST(ForecastCalibration, ScoresWithoutWidthCountForCoverageNotForTheQuantile) {
  // A sweep's batch at a short history: a fifth of the raw intervals have no width (crossed
  // quantiles), and their targets miss. The others score 0.5 .. 1.4. The factor is the quantile of
  // the finite scores alone, as if the degenerate ones had not been scored; the misses still count.
  std::vector<char> inside;
  std::vector<double> scores, finite;
  for (int j = 0; j < 50; ++j) {
    const bool degenerate = j % 5 == 0;
    const double s = degenerate ? conformal_score(3.0, 2.0, 2.0, 2.0) : 0.5 + 0.02 * j;
    inside.push_back(char(!degenerate && s <= 1.0));
    scores.push_back(s);
    if (!degenerate) finite.push_back(s);
  }
  AdaptiveConformal aci(1, CalibrationRule::kQuantile, 0.90, 0.05, 200);
  aci.update_batch(0, inside, scores);
  const double misses = double(std::count(inside.begin(), inside.end(), 0)) / 50.0;
  const double level = 0.10 + 0.05 * (0.10 - misses);
  std::sort(finite.begin(), finite.end());
  const long n = long(finite.size());
  const long rank = std::clamp<long>(long(std::ceil((n + 1) * (1 - level) - 1e-9)), 1, n);
  EXPECT_DOUBLE_EQ(aci.width_factor(0), finite[std::size_t(rank - 1)]);
  EXPECT_LT(aci.width_factor(0), 2.0);
  EXPECT_DOUBLE_EQ(aci.realised_coverage(0), 1.0 - misses);
  EXPECT_EQ(aci.updates(0), 50);
}

TEST(ForecastCalibration, RestoredStateContinuesIdentically) {
  for (const CalibrationRule rule : {CalibrationRule::kQuantile, CalibrationRule::kScale}) {
    AdaptiveConformal a(2, rule, 0.90, 0.05, 12), b(2, rule, 0.90, 0.05, 12);
    std::mt19937_64 gen(5);
    std::uniform_real_distribution<double> u(0.0, 3.0);
    for (int i = 0; i < 30; ++i) a.update(i % 2, u(gen) < 2.5, u(gen));  // wraps the ring
    for (int k = 0; k < 2; ++k) b.restore(k, a.state(k));
    for (int i = 0; i < 20; ++i) {
      const double s = u(gen);
      a.update(i % 2, s < 1.0, s);
      b.update(i % 2, s < 1.0, s);
      for (int k = 0; k < 2; ++k) {
        ASSERT_EQ(a.width_factor(k), b.width_factor(k));
        ASSERT_EQ(a.realised_coverage(k), b.realised_coverage(k));
      }
    }
  }
}

}  // namespace
