// The schedule-aware law (forecast/schedule_law.hpp) and the combined forecast
// (forecast/forecast_combination.hpp): the areas against their closed forms, a law fitted to a
// curve made by the law recovers its future under a schedule that anneals after the history ends,
// and the exponentially weighted average keeps within its regret bound of the best expert.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "forecast/baselines.hpp"
#include "forecast/forecast_combination.hpp"
#include "forecast/schedule_law.hpp"

namespace {

using namespace hpt::forecast;

std::vector<long long> steps_upto(int n) {
  std::vector<long long> s(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) s[std::size_t(i)] = i + 1;
  return s;
}

TEST(ScheduleLaw, AreasOfAConstantAndAStepSchedule) {
  const auto steps = steps_upto(100);
  const ScheduleAreas flat = schedule_areas(steps, std::vector<double>(100, 0.5));
  for (int i = 0; i < 100; ++i) {
    EXPECT_NEAR(flat.forward[std::size_t(i)], 0.5 * (i + 1), 1e-12);
    EXPECT_NEAR(flat.annealing[std::size_t(i)], 0.0, 1e-12);
  }
  // eta 1 up to step 50, 0.1 after: one decrease of 0.9 at step 51, remembered with lambda.
  std::vector<double> lr(100, 1.0);
  for (int i = 50; i < 100; ++i) lr[std::size_t(i)] = 0.1;
  const ScheduleAreas step = schedule_areas(steps, lr);
  for (int i = 50; i < 100; ++i) {
    double s2 = 0;
    for (int j = 50; j <= i; ++j) s2 += 0.9 * std::pow(kLawMomentum, j - 50);
    EXPECT_NEAR(step.annealing[std::size_t(i)], s2, 1e-9) << i;
    EXPECT_NEAR(step.forward[std::size_t(i)], 50 + 0.1 * (i - 49), 1e-9);
  }
  // Without a learning rate the forward area is the step count.
  EXPECT_NEAR(schedule_areas(steps, {}).forward[99], 100.0, 1e-12);
}

TEST(ScheduleLaw, FitOnAConstantPhaseForecastsTheDecay) {
  // A cosine-to-zero decay in the last 40 % of 2000 steps; the law's own curve, no noise.
  const int T = 2000;
  const auto steps = steps_upto(T);
  std::vector<double> lr(T);
  for (int i = 0; i < T; ++i) {
    const double f = std::max(0.0, (i - 0.6 * T) / (0.4 * T));
    lr[std::size_t(i)] = 0.1 * 0.5 * (1 + std::cos(M_PI * f));
  }
  const ScheduleAreas areas = schedule_areas(steps, lr);
  const double L0 = 0.5, A = 2.0, alpha = 0.4, C = 0.005;
  std::vector<double> loss(T);
  for (int i = 0; i < T; ++i)
    loss[std::size_t(i)] = L0 + A * std::pow(areas.forward[std::size_t(i)], -alpha) -
                           C * areas.annealing[std::size_t(i)];
  // History into the decay (1400 steps), forecast 200 steps ahead, where the loss drops fastest.
  const int n = 1400, h = 200;
  const ScheduleLaw law = fit_schedule_law(loss, areas, n);
  ASSERT_TRUE(law.ok);
  EXPECT_NEAR(law.alpha, alpha, 1e-3);
  EXPECT_NEAR(law.C, C, 1e-5);
  const double truth = target_log_loss(steps, loss, steps[n - 1], h);
  const double got = forecast_law(steps, loss, lr, areas, law, n, h);
  EXPECT_NEAR(got, truth, 0.01);
  // The schedule-blind baselines miss the drop by far more.
  EXPECT_GT(std::fabs(forecast_last(loss, n) - truth), 5 * std::fabs(got - truth));
  EXPECT_GT(std::fabs(forecast_power(steps, loss, n, h) - truth), 5 * std::fabs(got - truth));
}

TEST(ScheduleLaw, TooShortAHistoryFallsBackToLast) {
  const auto steps = steps_upto(50);
  const std::vector<double> loss(50, 1.0);
  const ScheduleAreas areas = schedule_areas(steps, {});
  const ScheduleLaw law = fit_schedule_law(loss, areas, 50);  // 2 blocks of 20: no fit
  EXPECT_FALSE(law.ok);
  EXPECT_DOUBLE_EQ(forecast_law(steps, loss, {}, areas, law, 50, 10), forecast_last(loss, 50));
}

TEST(ForecastCombination, StaysWithinTheRegretBoundOfTheBestExpert) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  const int experts = 5, T = 4000;
  ForecastCombination c(1, 1, experts, 1);
  std::vector<double> expert_error(experts, 0.0);
  double combined_error = 0;
  for (int t = 0; t < T; ++t) {
    const double target = noise(rng);
    std::vector<double> f(experts);
    // Expert 3 is the best (smallest bias and noise); the others are worse in different ways.
    const double bias[experts] = {0.5, 0.3, -0.4, 0.02, 0.8};
    const double spread[experts] = {0.2, 0.4, 0.3, 0.1, 0.05};
    for (int e = 0; e < experts; ++e) f[std::size_t(e)] = target + bias[e] + spread[e] * noise(rng);
    const double combined = c.combine(0, 0, f);
    combined_error += std::min(1.0, std::fabs(combined - target));
    for (int e = 0; e < experts; ++e)
      expert_error[std::size_t(e)] += std::min(1.0, std::fabs(f[std::size_t(e)] - target));
    c.update(0, 0, f, target);
  }
  const double best = *std::min_element(expert_error.begin(), expert_error.end());
  const double rate = ForecastCombination::kRate;
  EXPECT_LE(combined_error, best + (std::log(experts) + rate * ForecastCombination::kPrior) / rate +
                                rate * T / 8.0);
  // In practice far inside the bound: within 2 % of the best expert, whose weight dominates.
  EXPECT_LE(combined_error, 1.02 * best);
  EXPECT_GT(c.weights(0, 0)[3], 0.99);
}

TEST(ForecastCombination, BeforeAnyTargetThePriorExpertCarriesTheWeight) {
  ForecastCombination c(2, 3, 4, 1);
  const std::vector<double> f{0.0, 1.0, 2.0, std::nan("")};
  const double w1 = c.weights(0, 0)[1];
  EXPECT_GT(w1, 0.9);
  EXPECT_NEAR(c.combine(1, 2, f), 1.0, 0.1);
  // Groups and horizons learn apart: an update of group 0 leaves group 1 as it was.
  for (int t = 0; t < 50; ++t) c.update(0, 0, f, 2.0);
  EXPECT_GT(c.weights(0, 0)[2], 0.9);
  EXPECT_DOUBLE_EQ(c.weights(1, 0)[1], w1);
}

}  // namespace
