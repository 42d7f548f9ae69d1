// Adaptive conformal calibration of the forecast intervals: on synthetic streams whose raw
// intervals are far too narrow or far too wide, the realised coverage converges near 0.90.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "forecast/adaptive_conformal.hpp"

namespace {

using hpt::forecast::AdaptiveConformal;

// Coverage over the second half of a stream of `n` targets ~ N(0, truth_sd^2) whose raw forecast
// interval is the N(0, 1) 90 % interval (+-1.645).
double late_coverage(double truth_sd, int n, AdaptiveConformal& aci) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> z(0.0, truth_sd);
  int inside = 0, counted = 0;
  for (int i = 0; i < n; ++i) {
    const auto iv = aci.apply(0, -1.645, 0.0, 1.645);
    const double y = z(gen);
    const bool in = y >= iv.lo && y <= iv.hi;
    aci.update(0, in);
    if (i >= n / 2) {
      inside += in;
      ++counted;
    }
  }
  return double(inside) / counted;
}

TEST(ForecastCalibration, CoverageConvergesNearNinetyPercent) {
  for (double sd : {0.2, 3.0, 10.0}) {
    SCOPED_TRACE(sd);
    AdaptiveConformal aci(1, 0.90, 0.02);
    const double cov = late_coverage(sd, 20000, aci);
    EXPECT_NEAR(cov, 0.90, 0.02);
    // The width factor approaches the ratio of the true to the assumed spread.
    EXPECT_NEAR(std::log(aci.width_factor(0)), std::log(sd), 0.3);
  }
}

TEST(ForecastCalibration, WithoutCorrectionTheStreamIsMiscalibrated) {
  // The same stream's raw coverage (the check above is not vacuous): sd 3 gives ~41 %.
  std::mt19937_64 gen(7);
  std::normal_distribution<double> z(0.0, 3.0);
  int inside = 0;
  for (int i = 0; i < 20000; ++i) inside += std::fabs(z(gen)) <= 1.645;
  EXPECT_LT(inside / 20000.0, 0.5);
}

TEST(ForecastCalibration, UpdatesFollowTheRule) {
  AdaptiveConformal aci(2, 0.90, 0.1);
  aci.update(1, false);  // theta_1 = 0.1 * 0.9
  aci.update(1, true);   // theta_1 = 0.09 - 0.01
  EXPECT_DOUBLE_EQ(aci.width_factor(0), 1.0);
  EXPECT_NEAR(aci.width_factor(1), std::exp(0.08), 1e-15);
  const auto iv = aci.apply(1, 1.0, 2.0, 4.0);
  EXPECT_NEAR(iv.lo, 2.0 - std::exp(0.08), 1e-14);
  EXPECT_NEAR(iv.hi, 2.0 + 2.0 * std::exp(0.08), 1e-14);
  EXPECT_DOUBLE_EQ(iv.mid, 2.0);
  EXPECT_DOUBLE_EQ(aci.realised_coverage(1), 0.5);
  EXPECT_TRUE(std::isnan(aci.realised_coverage(0)));
}

}  // namespace
