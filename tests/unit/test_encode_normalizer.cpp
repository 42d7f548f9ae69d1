// Running z-score normaliser (docs/method.md#normalisation): Welford statistics against a two-pass
// host mean/variance over exactly the samples that were not frozen, clamping, freezing during
// Predict, zero-variance features, non-finite inputs, and the exposed mean / inverse std.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/feature_normalizer.hpp"
#include "kernels/telemetry_history.hpp"
#include "test_support.hpp"

namespace {

namespace tm = hpt::telemetry;

template <class T>
class EncodeNormalizer : public ::testing::Test {};
TYPED_TEST_SUITE(EncodeNormalizer, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Host model: every accepted sample per (run, feature); statistics by two passes.
struct HostFeature {
  std::vector<double> samples;
  double mean() const {
    double s = 0;
    for (double x : samples) s += x;
    return samples.empty() ? 0.0 : s / double(samples.size());
  }
  double var() const {
    if (samples.empty()) return 0.0;
    const double m = mean();
    double s = 0;
    for (double x : samples) s += (x - m) * (x - m);
    return s / double(samples.size());
  }
  double normalise(double x, double clamp) const {
    const double v = var();
    if (!(v > 0.0)) return 0.0;
    return std::clamp((x - mean()) / std::sqrt(v + 1e-8), -clamp, clamp);
  }
};

template <class Space, class Real>
struct Fixture {
  using Mem = typename Space::memory_space;
  int runs, features;
  hpt::TelemetryHistory<Real, Mem> history;
  hpt::FeatureNormalizer<Real, Mem> state;
  hpt::View2<Real, Mem> raw, out;
  typename hpt::View2<Real, Mem>::host_mirror_type raw_h;
  std::vector<std::vector<HostFeature>> host;
  Fixture(int r, int f, double clamp)
      : runs(r),
        features(f),
        history(hpt::create_history<Real, Mem>(r, 4, 4)),
        state(hpt::create_normalizer<Real, Mem>(r, f, clamp)),
        raw("raw", r, f),
        out("out", r, f),
        raw_h(Kokkos::create_mirror_view(raw)),
        host(r, std::vector<HostFeature>(f)) {}
  void set_phases(const std::vector<int>& phase) {
    auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), history.scalars);
    for (int r = 0; r < runs; ++r) s(r, tm::kPhase) = phase[r];
    Kokkos::deep_copy(history.scalars, s);
  }
  // Normalises raw_h on the device; the host model accepts the samples of runs not in Predict.
  hpt::View2<Real, Kokkos::HostSpace> step(const std::vector<int>& phase) {
    set_phases(phase);
    Kokkos::deep_copy(raw, raw_h);
    hpt::normalize(Space(), state, history, raw, out);
    for (int r = 0; r < runs; ++r)
      for (int f = 0; f < features; ++f)
        if (phase[r] != tm::kPredict && std::isfinite(double(raw_h(r, f))))
          host[r][f].samples.push_back(double(raw_h(r, f)));
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  }
};

TYPED_TEST(EncodeNormalizer, WelfordMatchesTwoPassAndFreezesDuringPredict) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(41);
  std::normal_distribution<double> z(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int runs = 3, features = hpt::kFeatures;
  Fixture<Space, Real> fx(runs, features, 10.0);
  // Feature f has its own scale and offset (up to 1e4), feature 5 is constant in every run.
  std::vector<double> scale(features), offset(features);
  for (int f = 0; f < features; ++f)
    scale[f] = std::pow(10.0, 4.0 * u(rng) - 2.0), offset[f] = 100 * z(rng);
  int frozen_steps = 0;
  for (int t = 0; t < 60; ++t) {
    std::vector<int> phase(runs);
    for (int r = 0; r < runs; ++r) {
      phase[r] = int(u(rng) * 4.0) % 4;  // Predict (2) about a quarter of the time
      frozen_steps += phase[r] == tm::kPredict;
      for (int f = 0; f < features; ++f)
        fx.raw_h(r, f) = Real(f == 5 ? 0.1 : offset[f] + scale[f] * z(rng) * (1 + r));
    }
    const auto y = fx.step(phase);
    for (int r = 0; r < runs; ++r)
      for (int f = 0; f < features; ++f) {
        const HostFeature& h = fx.host[r][f];
        const double want = h.normalise(double(fx.raw_h(r, f)), 10.0);
        // Welford and two passes differ by rounding amplified by |mean| / std (offset vs scale).
        const double cond = h.var() > 0 ? std::fabs(h.mean()) / std::sqrt(h.var()) : 1.0;
        const double tol = hpt::test::tolerance<Real>(64) * std::max(1.0, cond);
        ASSERT_TRUE(hpt::test::near_rel(double(y(r, f)), double(Real(want)), tol))
            << "step " << t << " run " << r << " feature " << f;
      }
  }
  EXPECT_GT(frozen_steps, 10);
  // Exposed statistics: the mean and 1/sqrt(var + 1e-8) of the accepted samples.
  auto center = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.state.center);
  auto inv_std = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.state.inv_std);
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.state.count);
  for (int r = 0; r < runs; ++r)
    for (int f = 0; f < features; ++f) {
      const HostFeature& h = fx.host[r][f];
      const double cond = h.var() > 0 ? std::fabs(h.mean()) / std::sqrt(h.var()) : 1.0;
      const double tol = hpt::test::tolerance<Real>(64) * std::max(1.0, cond);
      EXPECT_EQ(count(r, f), double(h.samples.size()));
      EXPECT_TRUE(hpt::test::near_rel(center(r, f), h.mean(), tol)) << r << " " << f;
      const double want_inv = h.var() > 0 ? 1.0 / std::sqrt(h.var() + 1e-8) : 0.0;
      if (f == 5)
        EXPECT_EQ(inv_std(r, f), Real(0));  // constant feature
      else
        EXPECT_NEAR(inv_std(r, f), want_inv, tol * std::max(1.0, want_inv));
    }
}

TYPED_TEST(EncodeNormalizer, ClampsOutliers) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(42);
  std::normal_distribution<double> z(0.0, 1.0);
  Fixture<Space, Real> fx(2, 3, 3.0);
  for (int t = 0; t < 30; ++t) {
    for (int r = 0; r < 2; ++r)
      for (int f = 0; f < 3; ++f) fx.raw_h(r, f) = Real(z(rng));
    fx.step({tm::kFull, tm::kFull});
  }
  // Far outliers in both directions, and one moderate value that must not be clamped.
  fx.raw_h(0, 0) = Real(1e3);
  fx.raw_h(0, 1) = Real(-1e3);
  fx.raw_h(0, 2) = Real(0.5);
  fx.raw_h(1, 0) = Real(50);
  fx.raw_h(1, 1) = Real(-50);
  fx.raw_h(1, 2) = Real(-0.25);
  const auto y = fx.step({tm::kFull, tm::kPredict});
  EXPECT_EQ(y(0, 0), Real(3));
  EXPECT_EQ(y(0, 1), Real(-3));
  EXPECT_EQ(y(1, 0), Real(3));
  EXPECT_EQ(y(1, 1), Real(-3));
  const double tol = hpt::test::tolerance<Real>(32);
  EXPECT_TRUE(hpt::test::near_rel(
      y(0, 2), double(Real(fx.host[0][2].normalise(double(Real(0.5)), 3.0))), tol));
  EXPECT_TRUE(hpt::test::near_rel(
      y(1, 2), double(Real(fx.host[1][2].normalise(double(Real(-0.25)), 3.0))), tol));
  EXPECT_LT(std::fabs(y(0, 2)), Real(3));
}

TYPED_TEST(EncodeNormalizer, FirstSampleConstantsAndNonFiniteGiveZero) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  Fixture<Space, Real> fx(1, 4, 10.0);
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  const Real inf = std::numeric_limits<Real>::infinity();
  // First sample: variance 0 everywhere -> 0.
  fx.raw_h(0, 0) = Real(2.5), fx.raw_h(0, 1) = Real(7), fx.raw_h(0, 2) = Real(-1),
              fx.raw_h(0, 3) = Real(1);
  auto y = fx.step({tm::kWarmup});
  for (int f = 0; f < 4; ++f) EXPECT_EQ(y(0, f), Real(0)) << f;
  // Second: feature 1 repeats (still 0), feature 2 is NaN, feature 3 is Inf (both 0, not counted).
  fx.raw_h(0, 0) = Real(3.5), fx.raw_h(0, 2) = nan, fx.raw_h(0, 3) = inf;
  y = fx.step({tm::kFull});
  EXPECT_NE(y(0, 0), Real(0));
  EXPECT_EQ(y(0, 1), Real(0));
  EXPECT_EQ(y(0, 2), Real(0));
  EXPECT_EQ(y(0, 3), Real(0));
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.state.count);
  EXPECT_EQ(count(0, 0), 2.0);
  EXPECT_EQ(count(0, 2), 1.0);
  EXPECT_EQ(count(0, 3), 1.0);
  // With two samples 2.5 and 3.5: mean 3, var 0.25, so 3.5 maps to 0.5 / sqrt(0.25 + 1e-8).
  EXPECT_TRUE(
      hpt::test::near_rel(y(0, 0), 0.5 / std::sqrt(0.25 + 1e-8), hpt::test::tolerance<Real>()));
}

}  // namespace
