// The learned level forecaster's model: the quantile regressions recover known quantiles, the
// corpus sampling takes the origins and targets its options say (checked against a host loop),
// and a forecast's interval holds its median.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "forecast/curve_densify.hpp"
#include "forecast/level_features.hpp"
#include "forecast/level_model.hpp"
#include "test_level_support.hpp"

namespace {

using hpt::forecast::kLevelFeatures;
using hpt::forecast::LevelSample;

// Quantile q of the change given x is 0.3 + (2q - 1) + 0.5 x1 - 0.2 x2; the other features are
// noise the fit must weigh near 0.
std::vector<LevelSample> linear_samples(int count) {
  return hpt::test::linear_level_samples(count, 3, 0.3, 0.5, -0.2, 1.0);
}

}  // namespace

TEST(LevelModel, QuantileRegressionRecoversKnownQuantiles) {
  const std::vector<LevelSample> samples = linear_samples(40000);
  for (const double q : {0.05, 0.5, 0.95}) {
    const std::vector<double> w = hpt::forecast::fit_quantile(samples, q, 1e-6, 60);
    ASSERT_EQ(w.size(), std::size_t(kLevelFeatures));
    EXPECT_NEAR(w[0], 0.3 + (2 * q - 1), 0.03) << "quantile " << q;
    EXPECT_NEAR(w[1], 0.5, 0.03) << "quantile " << q;
    EXPECT_NEAR(w[2], -0.2, 0.03) << "quantile " << q;
    for (int j = 3; j < kLevelFeatures; ++j) EXPECT_NEAR(w[std::size_t(j)], 0.0, 0.03) << j;
    // The fraction of changes below the fitted quantile is q.
    int below = 0;
    for (const LevelSample& s : samples) {
      double p = 0;
      for (int j = 0; j < kLevelFeatures; ++j) p += w[std::size_t(j)] * s.f.x[std::size_t(j)];
      below += s.change < p;
    }
    EXPECT_NEAR(double(below) / double(samples.size()), q, 0.01) << "quantile " << q;
  }
}

TEST(LevelModel, SamplesAreTheOriginsAndTargetsOfTheSampling) {
  hpt::forecast::Curve c;
  c.id = "r";
  for (int s = 1; s <= 300; ++s) {
    c.steps.push_back(s);
    c.loss.push_back(2.0 / std::sqrt(double(s)) * (1 + 0.1 * std::sin(s)));
    c.lr.push_back(s < 200 ? 0.1 : 0.01);
  }
  hpt::forecast::LevelSampling sampling;
  sampling.horizons = {10, 50};
  sampling.every = 10;
  sampling.first_origin = 20;
  sampling.drop_lr_every = 4;
  const std::vector<LevelSample> samples = hpt::forecast::level_samples({c}, sampling);
  // Host loop: origin n (t = n), horizon h has a target when steps t+h-4 .. t+h+5 exist.
  std::size_t at = 0;
  int origin = 0;
  for (int n = 20; n <= 300; n += 10, ++origin)
    for (int h : sampling.horizons) {
      if (n + h + 5 > 300) continue;
      ASSERT_LT(at, samples.size());
      const LevelSample& s = samples[at++];
      double window = 0, last = 0;
      for (int i = n + h - 4; i <= n + h + 5; ++i) window += c.loss[std::size_t(i - 1)];
      for (int i = n - 9; i <= n; ++i) last += c.loss[std::size_t(i - 1)];
      EXPECT_EQ(s.horizon, h);
      EXPECT_NEAR(s.f.last, std::log(last / 10), 1e-12);
      EXPECT_NEAR(s.change, std::log(window / 10) - std::log(last / 10), 1e-12);
      EXPECT_EQ(s.f.x[18], origin % 4 == 3 ? 0.0 : 1.0) << "origin " << n;  // has_lr
    }
  EXPECT_EQ(at, samples.size());
}

TEST(LevelModel, EndSamplesTargetTheFinalLevelFromOriginsInTheirSpan) {
  hpt::forecast::Curve c;
  c.id = "r";
  for (int s = 1; s <= 400; ++s) {
    c.steps.push_back(s);
    c.loss.push_back(3.0 / std::sqrt(double(s)) * (1 + 0.1 * std::cos(s)));
    c.lr.push_back(0.1 * (1 - s / 401.0));
  }
  hpt::forecast::LevelSampling sampling;
  sampling.to_end = true;
  sampling.end_from = 0.1, sampling.end_to = 0.5;
  sampling.every = 10;
  sampling.drop_lr_every = 3;
  const std::vector<LevelSample> samples = hpt::forecast::level_samples({c}, sampling);
  // Host loop: origins n = 40, 50, .., 200 (from 10 % to 50 % of 400 entries, every 10 from the
  // 20th); the target is the log mean of the newest 10 losses at the run's end, the horizon the
  // steps left.
  double final_level = 0;
  for (int i = 391; i <= 400; ++i) final_level += c.loss[std::size_t(i - 1)];
  final_level = std::log(final_level / 10);
  std::size_t at = 0;
  int origin = 0;
  for (int n = 40; n <= 200; n += 10, ++origin) {
    ASSERT_LT(at, samples.size());
    const LevelSample& s = samples[at++];
    const bool drop = origin % 3 == 2;
    const auto expect =
        hpt::forecast::level_features(hpt::forecast::level_history(c.steps, c.loss, n), c.steps,
                                      drop ? std::vector<double>{} : c.lr, 400 - n);
    for (int j = 0; j < kLevelFeatures; ++j)
      EXPECT_DOUBLE_EQ(s.f.x[std::size_t(j)], expect.x[std::size_t(j)]) << "origin " << n;
    EXPECT_NEAR(s.change, final_level - expect.last, 1e-12) << "origin " << n;
    EXPECT_EQ(s.f.x[18], drop ? 0.0 : 1.0) << "origin " << n;  // has_lr
  }
  EXPECT_EQ(at, samples.size());
}

TEST(LevelModel, ADensifiedRunIsSampledAtItsLoggedStepsOnly) {
  hpt::forecast::Curve logged;
  for (long long s = 10; s <= 600; s += 10) {
    logged.steps.push_back(s);
    logged.loss.push_back(2.0 / std::sqrt(double(s)) * (1 + 0.1 * std::sin(double(s))));
  }
  const hpt::forecast::Curve c = hpt::forecast::densified(logged);
  hpt::forecast::LevelSampling sampling;
  sampling.horizons = {10, 50};
  sampling.drop_lr_every = 0;
  const std::vector<LevelSample> samples = hpt::forecast::level_samples({c}, sampling);
  // Host loop: origins at the logged steps t >= 30 (n = t - 9 entries: the 20th entry is step 29,
  // whose newest logged step, 20, has under 20 entries), a target where steps t+h+5 exist.
  std::size_t at = 0;
  for (long long t = 30; t <= 600; t += 10)
    for (int h : sampling.horizons) {
      if (t + h + 5 > 600) continue;
      ASSERT_LT(at, samples.size());
      const LevelSample& s = samples[at++];
      const int n = int(t - 9);
      const auto expect = hpt::forecast::level_features(
          hpt::forecast::level_history(c.steps, c.loss, n), c.steps, c.lr, h);
      EXPECT_EQ(s.horizon, h);
      for (int j = 0; j < kLevelFeatures; ++j)
        EXPECT_DOUBLE_EQ(s.f.x[std::size_t(j)], expect.x[std::size_t(j)]) << "t " << t;
    }
  EXPECT_EQ(at, samples.size());
}

TEST(LevelModel, ForecastIntervalHoldsItsMedian) {
  hpt::forecast::LevelModel m;
  m.median.assign(kLevelFeatures, 0.0);
  m.q05.assign(kLevelFeatures, 0.0);
  m.q95.assign(kLevelFeatures, 0.0);
  m.median[0] = 0.1, m.median[1] = -0.2;
  m.q05[0] = -0.2;
  m.q95[0] = 0.3;
  hpt::forecast::LevelFeatures f;
  f.last = 2.0;
  f.x[0] = 1.0, f.x[1] = 0.5;
  const auto out = hpt::forecast::level_forecast(m, f);
  EXPECT_DOUBLE_EQ(out.mid, 2.0 + 0.1 - 0.1);
  EXPECT_DOUBLE_EQ(out.lo, 1.8);
  EXPECT_DOUBLE_EQ(out.hi, 2.3);
  f.x[1] = -3.0;  // median 2.7 lies above both quantile forecasts: the interval is widened to it
  const auto wide = hpt::forecast::level_forecast(m, f);
  EXPECT_DOUBLE_EQ(wide.mid, 2.7);
  EXPECT_DOUBLE_EQ(wide.lo, 1.8);
  EXPECT_DOUBLE_EQ(wide.hi, 2.7);
}

TEST(LevelModel, ProbabilityBelowIsTheTwoPieceNormal) {
  hpt::forecast::LevelForecast f;
  f.mid = 1.0, f.lo = 0.5, f.hi = 2.0;  // spreads 0.5 and 1.0 over the 95 % quantile 1.6449
  EXPECT_NEAR(f.probability_below(1.0), 0.5, 1e-12);
  EXPECT_NEAR(f.probability_below(0.5), 0.05, 1e-9);
  EXPECT_NEAR(f.probability_below(2.0), 0.95, 1e-9);
  // Host check of one point of each half against the normal CDF written out.
  auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  EXPECT_NEAR(f.probability_below(0.8), cdf(-0.2 / (0.5 / 1.6448536269514722)), 1e-12);
  EXPECT_NEAR(f.probability_below(1.3), cdf(0.3 / (1.0 / 1.6448536269514722)), 1e-12);
  f.lo = f.mid;  // no spread below: a step
  EXPECT_EQ(f.probability_below(0.99), 0.0);
}

// P(X < Y) for two independent two-piece normals, against the closed form where both halves share
// a spread and against a fine host quadrature of the density of Y times the CDF of X otherwise.
TEST(LevelModel, ProbabilityBelowAnotherForecastIntegratesItsInterval) {
  using hpt::forecast::LevelForecast;
  constexpr double kZ95 = 1.6448536269514722;
  auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const LevelForecast x{1.0, 0.6, 1.4}, y{1.3, 0.8, 1.8};  // normals: spreads 0.4 and 0.5 / kZ95
  const double sx = 0.4 / kZ95, sy = 0.5 / kZ95;
  EXPECT_NEAR(x.probability_below(y), cdf(0.3 / std::sqrt(sx * sx + sy * sy)), 1e-7);
  // Skewed both ways: a host trapezoid over y of density_Y(y) * P(X < y).
  const LevelForecast a{0.2, -0.1, 1.5}, b{-0.5, -3.5, 1.0};
  const double b_lo = (b.mid - b.lo) / kZ95, b_hi = (b.hi - b.mid) / kZ95;
  double host = 0;
  const double dy = 1e-4;
  for (double yv = b.mid - 12 * b_lo; yv <= b.mid + 12 * b_hi; yv += dy) {
    const double s = yv < b.mid ? b_lo : b_hi, z = (yv - b.mid) / s;
    host += std::exp(-0.5 * z * z) / (s * std::sqrt(2 * 3.14159265358979323846)) *
            a.probability_below(yv) * dy;
  }
  EXPECT_NEAR(a.probability_below(b), host, 1e-5);
  EXPECT_NEAR(a.probability_below(b) + b.probability_below(a), 1.0, 1e-6);  // continuous: no ties
  // An other without an interval is its median, exactly.
  const LevelForecast point{-0.5, std::nan(""), std::nan("")};
  EXPECT_EQ(a.probability_below(point), a.probability_below(-0.5));
  EXPECT_EQ(a.probability_below(LevelForecast{-0.5, -0.5, -0.5}), a.probability_below(-0.5));
}
