// The schedule-aware law (forecast/schedule_law.hpp) and the combined forecast
// (forecast/forecast_combination.hpp): the areas against their closed forms, a law fitted to a
// curve made by the law recovers its future under a schedule that anneals after the history ends,
// and the combined forecast's weights equal a direct sum of the decayed evidence, move to the
// expert that keeps being right, run by run, and hardly depend on the origins' cadence.
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

// The evidence by a direct sum: every realised target's capped, scaled error, decayed from its step
// to the newest step with the e-folding `memory`, times the target's weight.
std::vector<double> evidence_by_sum(const std::vector<std::vector<double>>& errors,
                                    const std::vector<long long>& steps, double weight,
                                    double memory) {
  std::vector<double> e(errors[0].size(), 0.0);
  for (std::size_t j = 0; j < steps.size(); ++j)
    for (std::size_t i = 0; i < e.size(); ++i)
      e[i] += weight * std::min(ForecastCombination::kCap, errors[j][i]) *
              std::exp(-double(steps.back() - steps[j]) / memory);
  return e;
}

// Feeds a one-run combination of three experts 60 random targets (four horizons, every `every`
// steps) and checks its weights against the direct sums with the given e-foldings and target
// weight.
void expect_weights_of_direct_sums(ForecastCombination& c, long long every,
                                   const std::vector<double>& memory, double weight) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int horizons = 4;
  std::vector<std::vector<std::vector<double>>> errors(horizons);  // per horizon
  std::vector<std::vector<long long>> steps(horizons);
  for (int j = 0; j < 60; ++j) {
    const long long step = 5 * every + every * (j / horizons);  // four targets realised per step
    const int k = j % horizons;
    const double target = u(rng), scale = 0.2 + 0.1 * (j % 3);
    const std::vector<double> f{target + 0.05 * u(rng), target + 0.3 * u(rng), target + u(rng)};
    c.update(0, k, step, f, target, scale);
    errors[std::size_t(k)].push_back({std::fabs(f[0] - target) / scale,
                                      std::fabs(f[1] - target) / scale,
                                      std::fabs(f[2] - target) / scale});
    steps[std::size_t(k)].push_back(step);
  }
  std::vector<std::vector<double>> own;
  std::vector<double> pooled(3, 0.0);
  for (int k = 0; k < horizons; ++k) {
    // Every horizon's last target came at the same (newest) step, so each sum decays to it.
    own.push_back(evidence_by_sum(errors[std::size_t(k)], steps[std::size_t(k)], weight,
                                  memory[std::size_t(k)]));
    for (std::size_t i = 0; i < 3; ++i) pooled[i] += own.back()[i];
  }
  pooled[0] -= ForecastCombination::kPrior;
  const double least = *std::min_element(pooled.begin(), pooled.end());
  for (int k = 0; k < horizons; ++k) {
    const std::vector<double>& o = own[std::size_t(k)];
    const double least_own = *std::min_element(o.begin(), o.end());
    std::vector<double> e(3);
    double sum = 0;
    for (std::size_t i = 0; i < 3; ++i)
      sum += e[i] = std::exp(-ForecastCombination::kRate * (pooled[i] - least)) *
                    (least_own + ForecastCombination::kRatioFloor) /
                    (o[i] + ForecastCombination::kRatioFloor);
    const std::vector<double> w = c.weights(0, k);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(w[i], e[i] / sum, 1e-12) << "horizon " << k;
  }
}

TEST(ForecastCombination, WeightsFollowTheDecayedEvidenceOfADirectSum) {
  const long long every = 20;
  ForecastCombination c({every}, 3, {10, 50, 100, 200});  // 200: the shorter memory
  const double m = ForecastCombination::kMemorySteps, l = ForecastCombination::kLongMemorySteps;
  expect_weights_of_direct_sums(c, every, {m, m, m, l}, double(every) / 10.0 / 4);
  const std::vector<double> w = c.weights(0, 1);
  const std::vector<double> f{1.0, 2.0, std::nan("")};
  EXPECT_NEAR(c.combine(0, 1, f), (w[0] * 1.0 + w[1] * 2.0) / (w[0] + w[1]), 1e-12);
}

TEST(ForecastCombination, AShortRunsClockShortensTheMemoriesAndWeighsATargetAtMostFourTimesMore) {
  // A run of 100 logged steps: clock 0.05. Memories 10 and (from horizon 10 = 200 x 0.05) 3.75
  // steps; a target weighs its spacing over 10 x 0.25 (the floor), not over 10 x 0.05.
  const long long every = 2;
  ForecastCombination c({every}, 3, {5, 10, 15, 20}, {0.05});
  const double m = 0.05 * ForecastCombination::kMemorySteps;
  const double l = 0.05 * ForecastCombination::kLongMemorySteps;
  expect_weights_of_direct_sums(c, every, {m, l, l, l}, double(every) / (10.0 * 0.25) / 4);
}

TEST(ForecastCombination, AClockOfOneHalfWeighsARunAtHalfTheStepsAsTheFullRun) {
  // Run 0 on the reference clock; run 1 the same targets at half the steps, spacing and horizons,
  // on a clock of 0.5: its weights must equal run 0's at every horizon.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ForecastCombination full({20}, 3, {10, 50, 100, 200});
  ForecastCombination half({10}, 3, {5, 25, 50, 100}, {0.5});
  ForecastCombination slow({10}, 3, {5, 25, 50, 100});  // the half run on the reference clock
  for (int j = 0; j < 80; ++j) {
    const long long step = 100 + 20 * (j / 4);
    const int k = j % 4;
    const double target = u(rng), scale = 0.3;
    const std::vector<double> f{target + 0.4 * u(rng), target + 0.1 * u(rng), target + u(rng)};
    full.update(0, k, step, f, target, scale);
    half.update(0, k, step / 2, f, target, scale);
    slow.update(0, k, step / 2, f, target, scale);
  }
  for (int k = 0; k < 4; ++k) {
    const std::vector<double> a = full.weights(0, k), b = half.weights(0, k);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << "horizon " << k;
  }
  // On the reference clock the half run weighs each target half as much: its weights differ.
  EXPECT_GT(std::fabs(slow.weights(0, 0)[0] - half.weights(0, 0)[0]), 1e-6);
}

TEST(ForecastCombination, OnASmoothCurveTheExpertWithTheSmallestErrorsTakesTheWeight) {
  // Every error a small fraction of the interval's width: the exponential weights alone hardly
  // separate the experts; the error ratio gives expert 2 (five times closer than expert 1) the
  // most.
  ForecastCombination c({10}, 3, {10, 20});
  for (long long step = 10; step <= 1000; step += 10)
    for (int k = 0; k < 2; ++k) c.update(0, k, step, {1.02, 1.005, 1.001}, 1.0, 1.0);
  const std::vector<double> w = c.weights(0, 0);
  EXPECT_GT(w[2], 0.6);
  EXPECT_GT(w[2], 3.0 * w[1]);
  EXPECT_EQ(c.weights(0, 1), w);  // the same errors at both horizons
}

TEST(ForecastCombination, ALearnedForecastThatKeepsMissingLosesItsWeightRunByRun) {
  ForecastCombination c({10, 10}, 3, {10});
  const std::vector<double> before = c.weights(0, 0);
  EXPECT_GT(before[0], before[1]);  // the head start of the learned forecast
  EXPECT_DOUBLE_EQ(before[1], before[2]);
  // Run 0: expert 2 is exact, the learned forecast misses by two interval widths.
  for (long long step = 10; step <= 1000; step += 10)
    c.update(0, 0, step, {2.0, 0.5, 1.0}, 1.0, 0.5);
  EXPECT_GT(c.weights(0, 0)[2], 0.99);
  EXPECT_NEAR(c.combine(0, 0, {2.0, 0.5, 1.0}), 1.0, 0.01);
  // Run 1 learns apart; a target without a value changes nothing.
  c.update(1, 0, 10, {2.0, 0.5, 1.0}, std::nan(""), 0.5);
  EXPECT_EQ(c.weights(1, 0), before);
  // After the run turns (the learned forecast exact again) the old misses are forgotten.
  for (long long step = 1010; step <= 3000; step += 10)
    c.update(0, 0, step, {1.0, 0.5, 1.5}, 1.0, 0.5);
  EXPECT_GT(c.weights(0, 0)[0], 0.6);
}

TEST(ForecastCombination, BeforeAnyTargetTheLearnedExpertLeadsByItsHeadStart) {
  // No evidence yet: the learned expert's weight exp(rate * prior) times each other's, at every
  // horizon; an expert without a value (NaN) is left out of the mean.
  ForecastCombination c({10}, 4, {10, 20, 50});
  const double lead = std::exp(ForecastCombination::kRate * ForecastCombination::kPrior);
  for (int k = 0; k < 3; ++k) {
    const std::vector<double> w = c.weights(0, k);
    EXPECT_NEAR(w[0], lead / (lead + 3.0), 1e-15);
    for (int i = 1; i < 4; ++i) EXPECT_NEAR(w[std::size_t(i)], 1.0 / (lead + 3.0), 1e-15);
  }
  EXPECT_NEAR(c.combine(0, 1, {1.0, 2.0, 3.0, std::nan("")}), (lead + 2.0 + 3.0) / (lead + 2.0),
              1e-12);
  // An expert that is exact while the others miss takes the weight; one without values loses it.
  for (long long step = 10; step <= 1000; step += 10)
    for (int k = 0; k < 3; ++k) c.update(0, k, step, {1.5, 1.4, 1.0, std::nan("")}, 1.0, 0.5);
  EXPECT_GT(c.weights(0, 0)[2], 0.99);
  EXPECT_LT(c.weights(0, 0)[3], 1e-3);
}

TEST(ForecastCombination, TheWeightsHardlyDependOnTheCadenceOfTheOrigins) {
  // The same errors every 10 and every 50 steps: the targets weigh 1 and 5, and the evidence
  // differs only by how the sum of a geometric series approximates its integral.
  ForecastCombination fine({10}, 3, {10}), coarse({50}, 3, {10});
  const std::vector<double> f{1.3, 1.1, 1.0};
  for (long long step = 10; step <= 2000; step += 10) {
    fine.update(0, 0, step, f, 1.0, 1.0);
    if (step % 50 == 0) coarse.update(0, 0, step, f, 1.0, 1.0);
  }
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(fine.weights(0, 0)[i], coarse.weights(0, 0)[i], 0.05);
}

TEST(ForecastCombination, AnExpertWithoutAValueCountsLessThanTheCapWhileAnotherHasOne) {
  // One target, weight 1 (spacing 10, one horizon): a missing expert adds kMissing beside a finite
  // one, the cap when no expert has a value; each evidence is read back from the weights.
  const auto evidence_gap = [](const std::vector<double>& f) {
    ForecastCombination c({10}, 2, {10});
    c.update(0, 0, 10, f, 1.0, 1.0);
    const std::vector<double> w = c.weights(0, 0);
    // One horizon, so the pooled evidence is the own: log(w0 / w1) = (E1 - E0 + prior) +
    // log((E1 + floor) / (E0 + floor)).
    return std::log(w[0] / w[1]);
  };
  const double floor = ForecastCombination::kRatioFloor, prior = ForecastCombination::kPrior;
  // Expert 0 exact (evidence 0), expert 1 missing: E1 = kMissing.
  const double m = ForecastCombination::kMissing;
  EXPECT_NEAR(evidence_gap({1.0, std::nan("")}), m + prior + std::log((m + floor) / floor), 1e-12);
  // Both missing: both get the cap, only the head start separates them.
  EXPECT_NEAR(evidence_gap({std::nan(""), std::nan("")}), prior, 1e-12);
  EXPECT_LT(ForecastCombination::kMissing, ForecastCombination::kCap);
}

}  // namespace
