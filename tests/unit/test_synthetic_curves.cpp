// The synthetic prior of run.mode = pretrain: schedules against their definitions, a noise-free
// curve against the law computed by a plain loop here, and the draws' determinism and ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "forecast/synthetic_curves.hpp"

namespace {

using namespace hpt::forecast;

TEST(SyntheticCurves, SchedulesFollowTheirDefinitions) {
  const int T = 1000;
  EXPECT_DOUBLE_EQ(synthetic_lr(SyntheticSchedule::kConstant, 500, T), 1.0);
  EXPECT_NEAR(synthetic_lr(SyntheticSchedule::kCosine, T - 1, T), 0.0, 1e-4);
  EXPECT_NEAR(synthetic_lr(SyntheticSchedule::kCosine, 0, T), 1.0 / 30.0, 1e-12);  // warmup
  EXPECT_DOUBLE_EQ(synthetic_lr(SyntheticSchedule::kWsd, 700, T), 1.0);
  EXPECT_NEAR(synthetic_lr(SyntheticSchedule::kWsd, 900, T), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(synthetic_lr(SyntheticSchedule::kStep, 600, T), 0.1);
  EXPECT_DOUBLE_EQ(synthetic_lr(SyntheticSchedule::kStep, 800, T), 0.01);
  EXPECT_NEAR(synthetic_lr(SyntheticSchedule::kLinear, T, T), 1.0 / T, 1e-12);
}

TEST(SyntheticCurves, NoiseFreeCurveIsTheLawOfAPlainLoop) {
  SyntheticCurveSpec s;
  s.steps = 400;
  s.schedule = SyntheticSchedule::kWsd;
  s.peak_lr = 0.1;
  s.L0 = 0.5, s.A = 2.0, s.alpha = 0.5, s.C = 0.3;
  const Curve c = make_synthetic_curve(s, 7, 0);
  ASSERT_EQ(c.steps.size(), 400u);
  double s1 = 0, s2 = 0, m = 0, prev = 0.1 * synthetic_lr(s.schedule, 0, s.steps);
  for (int i = 0; i < s.steps; ++i) {
    const double eta = 0.1 * synthetic_lr(s.schedule, i, s.steps);
    m = 0.999 * m + (prev - eta);  // the law's momentum of the annealing area, one step apart
    s1 += eta, s2 += m, prev = eta;
    const double unit = 0.1 * s.steps;
    const double want = s.L0 + s.A * std::pow(s1 / unit * 50.0, -s.alpha) - s.C * s2 / unit;
    EXPECT_NEAR(std::log(c.loss[std::size_t(i)]), std::log(want), 1e-9) << i;
    EXPECT_DOUBLE_EQ(c.lr[std::size_t(i)], eta);
  }
}

TEST(SyntheticCurves, DrawsAreDeterministicAndInRange) {
  const std::vector<Curve> a = synthetic_curves(50, 3), b = synthetic_curves(50, 3);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 40u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].loss, b[i].loss);
    EXPECT_EQ(a[i].group, "synthetic");
    for (double l : a[i].loss) ASSERT_TRUE(std::isfinite(l) && l > 0);
  }
  EXPECT_NE(synthetic_curves(5, 4)[0].loss, a[0].loss);  // another seed, another curve
}

}  // namespace
