// Scoring target and baseline forecasters of run.mode = forecast against plain loops and exact
// curves whose forecast is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "forecast/baselines.hpp"

namespace {

using namespace hpt::forecast;

std::vector<long long> range_steps(long long first, int n) {
  std::vector<long long> s(std::size_t(n), 0);
  for (int i = 0; i < n; ++i) s[std::size_t(i)] = first + i;
  return s;
}

TEST(ForecastBaselines, TargetIsLogMeanOfTheTenStepWindow) {
  const auto steps = range_steps(0, 300);
  std::vector<double> loss(300);
  for (int i = 0; i < 300; ++i) loss[std::size_t(i)] = 1.0 + 0.01 * i + (i % 3 == 0 ? 0.5 : 0.0);
  for (long long t : {0LL, 37LL, 100LL}) {
    for (int h : {10, 50, 100}) {
      double sum = 0;
      for (long long s = t + h - 4; s <= t + h + 5; ++s) sum += loss[std::size_t(s)];
      EXPECT_DOUBLE_EQ(target_log_loss(steps, loss, t, h), std::log(sum / 10.0));
    }
  }
  // The window must be complete: t + h + 5 = 299 is the last step, 300 is past the end.
  EXPECT_FALSE(std::isnan(target_log_loss(steps, loss, 194, 100)));
  EXPECT_TRUE(std::isnan(target_log_loss(steps, loss, 195, 100)));
  // A gap inside the window.
  auto gappy = steps;
  for (std::size_t i = 150; i < gappy.size(); ++i) gappy[i] += 1;
  EXPECT_TRUE(std::isnan(target_log_loss(gappy, loss, 100, 50)));
  EXPECT_FALSE(std::isnan(target_log_loss(gappy, loss, 100, 40)));
}

TEST(ForecastBaselines, LastIsLogMeanOfTheNewestTenLosses) {
  std::vector<double> loss;
  for (int i = 0; i < 25; ++i) loss.push_back(0.1 * (i + 1));
  double sum = 0;
  for (int i = 10; i < 20; ++i) sum += loss[std::size_t(i)];
  EXPECT_DOUBLE_EQ(forecast_last(loss, 20), std::log(sum / 10));
  EXPECT_DOUBLE_EQ(forecast_last(loss, 3), std::log((0.1 + 0.2 + 0.3) / 3));
}

TEST(ForecastBaselines, LogLinExtrapolatesAnExactExponential) {
  // log L = 1 - 0.003 s exactly: the line is recovered and extrapolated exactly.
  const auto steps = range_steps(5, 400);
  std::vector<double> loss;
  for (long long s : steps) loss.push_back(std::exp(1.0 - 0.003 * double(s)));
  for (int n : {2, 50, 300}) {
    const double t = double(steps[std::size_t(n - 1)]);
    for (int h : {10, 200})
      EXPECT_NEAR(forecast_loglin(steps, loss, n, h), 1.0 - 0.003 * (t + h), 1e-10);
  }
}

TEST(ForecastBaselines, LogLinUsesOnlyTheLastHundredStepsAgainstAPlainFit) {
  const auto steps = range_steps(0, 260);
  std::vector<double> loss;
  for (int i = 0; i < 260; ++i) loss.push_back(2.0 + std::sin(0.1 * i) + 0.001 * i * i / 100);
  const int n = 250, h = 30;
  // Plain normal equations over steps 150..249 (the entries with step in (249 - 100, 249]).
  double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
  for (int i = 150; i < n; ++i) {
    const double x = i, y = std::log(loss[std::size_t(i)]);
    sx += x, sy += y, sxx += x * x, sxy += x * y, m += 1;
  }
  const double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  const double icept = (sy - slope * sx) / m;
  EXPECT_NEAR(forecast_loglin(steps, loss, n, h), icept + slope * (249 + h), 1e-9);
  // One point in range: falls back to `last`.
  const std::vector<long long> sparse{0, 500};
  const std::vector<double> two{1.0, 2.0};
  EXPECT_DOUBLE_EQ(forecast_loglin(sparse, two, 2, 10), forecast_last(two, 2));
}

// The slope's t statistic against plain normal equations and residuals: a noisy fall over the
// last 100 steps, noise alone (|t| small), an exact line (infinite), fewer than 4 entries (0).
TEST(ForecastBaselines, LogLinSlopeTStatisticAgainstAPlainFit) {
  const auto steps = range_steps(0, 200);
  std::mt19937 gen(3);
  std::normal_distribution<double> noise(0.0, 0.05);
  for (const double fall : {0.002, 0.0}) {
    std::vector<double> loss;
    for (int i = 0; i < 200; ++i) loss.push_back(std::exp(1.0 - fall * i + noise(gen)));
    const int n = 180;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (int i = n - 100; i < n; ++i) {
      const double x = i, y = std::log(loss[std::size_t(i)]);
      sx += x, sy += y, sxx += x * x, sxy += x * y, m += 1;
    }
    const double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    const double icept = (sy - slope * sx) / m;
    double rss = 0;
    for (int i = n - 100; i < n; ++i) {
      const double r = std::log(loss[std::size_t(i)]) - icept - slope * i;
      rss += r * r;
    }
    const double t = std::abs(slope) / std::sqrt(rss / (m - 2) / (sxx - sx * sx / m));
    const LogLinLine line = fit_loglin(steps, loss, n);
    EXPECT_NEAR(line.t_stat, t, 1e-8 * t) << "fall " << fall;
    if (fall > 0) {
      EXPECT_GT(line.t_stat, 10.0);
    }
  }
  std::vector<double> exact;
  for (int i = 0; i < 200; ++i) exact.push_back(std::exp(1.0 - 0.003 * i));
  EXPECT_GT(fit_loglin(steps, exact, 50).t_stat, 1e6);
  EXPECT_EQ(fit_loglin(steps, exact, 3).t_stat, 0.0);
}

TEST(ForecastBaselines, PowerLawFitRecoversAnExactPowerLaw) {
  for (const auto& truth : {PowerLaw{0.3, 2.0, 0.73, 0, true}, PowerLaw{0.0, 5.0, 0.4, 0, true},
                            PowerLaw{1.2, 0.8, 1.9, 0, true}}) {
    std::vector<double> s, L;
    for (int i = 0; i < 40; ++i) {
      s.push_back(10.0 + 20.0 * i);
      L.push_back(truth(s.back()));
    }
    const PowerLaw fit = fit_power_law(s, L);
    ASSERT_TRUE(fit.ok);
    EXPECT_NEAR(fit.c, truth.c, 1e-4 * truth.c);
    EXPECT_NEAR(fit.a, truth.a, 1e-4);
    EXPECT_NEAR(fit.b, truth.b, 1e-3 * truth.b);
    EXPECT_NEAR(std::log(fit(5000.0)), std::log(truth(5000.0)), 1e-4);
  }
}

TEST(ForecastBaselines, PowerLawFitKeepsCoefficientsNonNegative) {
  // A rising curve: the unconstrained fit would need b < 0; the constrained one has a, b >= 0.
  std::vector<double> s, L;
  for (int i = 1; i <= 20; ++i) {
    s.push_back(i * 20.0);
    L.push_back(1.0 + 0.01 * i);
  }
  const PowerLaw fit = fit_power_law(s, L);
  ASSERT_TRUE(fit.ok);
  EXPECT_GE(fit.a, 0.0);
  EXPECT_GE(fit.b, 0.0);
  EXPECT_FALSE(fit_power_law({1, 2}, {1, 1}).ok);  // fewer than 3 points
}

TEST(ForecastBaselines, PowerForecastFitsTwentyStepMeans) {
  // Losses constant within each 20-step block, equal to an exact power law at the block's mean
  // step + 1: the block means are exact points of the law, so the forecast is exact.
  const PowerLaw truth{0.5, 3.0, 0.6, 0, true};
  const auto steps = range_steps(0, 400);
  std::vector<double> loss;
  for (int i = 0; i < 400; ++i) loss.push_back(truth((i / 20) * 20 + 9.5 + 1.0));
  for (int h : {10, 100}) {
    EXPECT_NEAR(forecast_power(steps, loss, 400, h), std::log(truth(399.0 + h + 1.0)), 1e-5);
  }
  // Fewer than three blocks: `last`.
  EXPECT_DOUBLE_EQ(forecast_power(steps, loss, 59, 10), forecast_last(loss, 59));
}

TEST(ForecastBaselines, EmpiricalErrorQuantilesMatchNumpyLinear) {
  EmpiricalErrors e;
  const std::vector<double> values{3, -1, 4, 1, -5, 9, 2, -6, 5, 3, 5, -8};
  for (int i = 0; i < 9; ++i) e.add(values[std::size_t(i)]);
  EXPECT_TRUE(std::isnan(e.quantile(0.05)));  // fewer than 10 errors: no interval yet
  for (std::size_t i = 9; i < values.size(); ++i) e.add(values[i]);
  // Plain reference: sort a copy, interpolate linearly between the neighbouring order statistics.
  auto sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.05, 0.5, 0.95}) {
    const double pos = p * (sorted.size() - 1);
    const std::size_t lo = std::size_t(pos);
    const double want = sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (pos - double(lo));
    EXPECT_NEAR(e.quantile(p), want, 1e-12) << p;
  }
  EXPECT_DOUBLE_EQ(e.quantile(0.0), -8);
  EXPECT_DOUBLE_EQ(e.quantile(1.0), 9);
}

TEST(ForecastBaselines, EmpiricalErrorBatchesEqualOneByOne) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0.0, 1.0);
  EmpiricalErrors one, batched;
  for (int round = 0; round < 20; ++round) {
    std::vector<double> batch;
    for (int i = 0; i < 1 + round * 3; ++i) batch.push_back(z(rng) * (1 + round));
    if (round == 5) batch.push_back(std::numeric_limits<double>::quiet_NaN());  // skipped by both
    for (double x : batch) one.add(x);
    batched.add_batch(batch);
    ASSERT_EQ(one.count(), batched.count());
    if (one.count() < EmpiricalErrors::kMinErrors) continue;
    for (double p : {0.0, 0.05, 0.5, 0.95, 1.0})
      EXPECT_EQ(one.quantile(p), batched.quantile(p)) << round << " " << p;
  }
}

}  // namespace
