// `encoder = rich` (docs/method.md#rich-encoder, rich_features.hpp) against a plain host
// implementation of every one of the 64 formulas written here (recursive EMAs, explicit windows,
// textbook least squares), on random histories (short, exactly full and wrapped rings, with and
// without validation losses) for R = 1, 3 and 257 runs; the loss state against the same host model;
// and the property that nothing non-finite leaves the encoder on degenerate inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/encode_rich.hpp"
#include "test_encode_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::LossState;
using hpt::TelemetryRecord;
using hpt::test::HostRun;
namespace rf = hpt::rich;

template <class T>
class EncodeRich : public ::testing::Test {};
TYPED_TEST_SUITE(EncodeRich, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// The host reference of every rich feature (plain loops over full sequences).
using hpt::reference::ema;
using hpt::reference::host_rich;
using hpt::reference::kLossFloor;
using hpt::reference::kTiny;
using hpt::reference::logs;
using hpt::reference::mean;
using hpt::reference::pop_std;
using hpt::reference::tail;

template <class Real>
double as_output(double v) {
  const Real x = Real(v);
  return std::isfinite(x) ? double(x) : 0.0;
}

template <class Space, class Real>
struct Encoded {
  std::vector<HostRun> host;
  hpt::View2<Real, Kokkos::HostSpace> raw;
  hpt::View1<LossState<Real>, Kokkos::HostSpace> states;
};

// Every layout of runs on threads must give the host's features.
const hpt::RunLayout kLayouts[] = {hpt::RunLayout::TeamPerRun, hpt::RunLayout::ThreadPerRun,
                                   hpt::RunLayout::SeriesPerThread};

const char* name(hpt::RunLayout layout) {
  switch (layout) {
    case hpt::RunLayout::TeamPerRun:
      return "team per run";
    case hpt::RunLayout::ThreadPerRun:
      return "thread per run";
    default:
      return "series per thread";
  }
}

// Pushes `steps`, runs encode_rich (features and loss states in one launch) and copies back.
template <class Space, class Real>
Encoded<Space, Real> encode(const std::vector<std::vector<TelemetryRecord>>& steps, int runs,
                            int loss_cap, int other_cap, hpt::RunLayout layout) {
  const hpt::EncodeLaunch launch{layout, 0};
  using Mem = typename Space::memory_space;
  auto history = hpt::create_history<Real, Mem>(runs, loss_cap, other_cap);
  Encoded<Space, Real> out;
  out.host.resize(runs);
  hpt::test::push_steps<Space, Real>(history, steps, out.host);
  hpt::View2<Real, Mem> raw("raw", runs, hpt::kFeatures);
  hpt::View1<LossState<Real>, Mem> states("states", runs);
  Kokkos::deep_copy(raw, Real(-777));  // every entry must be written
  hpt::encode_rich(Space(), history, raw, states, launch);
  // The features-only and states-only entry points agree with the fused launch.
  hpt::View2<Real, Mem> raw_only("raw_only", runs, hpt::kFeatures);
  hpt::View1<LossState<Real>, Mem> states_only("states_only", runs);
  hpt::encode_rich(Space(), history, raw_only, launch);
  hpt::extract_loss_state(Space(), history, states_only, launch);
  out.raw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), raw);
  out.states = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), states);
  auto r2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), raw_only);
  auto s2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), states_only);
  for (int r = 0; r < runs; ++r) {
    for (int f = 0; f < hpt::kFeatures; ++f) EXPECT_EQ(r2(r, f), out.raw(r, f)) << r << " " << f;
    EXPECT_EQ(s2(r).log_loss, out.states(r).log_loss);
    EXPECT_EQ(s2(r).ema16, out.states(r).ema16);
  }
  return out;
}

template <class Space, class Real>
void check_features(const std::vector<std::vector<TelemetryRecord>>& steps, int runs, int loss_cap,
                    int other_cap) {
  for (const auto layout : kLayouts) {
    const auto e = encode<Space, Real>(steps, runs, loss_cap, other_cap, layout);
    for (int r = 0; r < runs; ++r) {
      const auto want = host_rich(e.host[r], loss_cap, other_cap);
      // z32 divides a difference of log losses by their std: rounding of the mean, relative to
      // |mean|, is amplified by |mean| / std (the summation order of kernel and host differ).
      const auto L = logs(HostRun::newest(e.host[r].loss, loss_cap), kLossFloor);
      const double z_cond = 1.0 + std::fabs(mean(tail(L, 32))) / (pop_std(tail(L, 32)) + 1e-8);
      for (int f = 0; f < hpt::kFeatures; ++f) {
        const double tol =
            hpt::test::tolerance<Real>(loss_cap) * (f == rf::kLossZ32 ? z_cond : 1.0);
        EXPECT_TRUE(hpt::test::near_rel(double(e.raw(r, f)), as_output<Real>(want[f]), tol))
            << "run " << r << " feature " << f << " (" << e.host[r].loss.size() << " losses, "
            << e.host[r].grad.size() << " gradient norms, " << name(layout) << ")";
      }
    }
  }
}

TYPED_TEST(EncodeRich, EveryFeatureMatchesHostAtEveryLength) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(31);
  // Around every window (8, 32, 128) and the capacities 256 / 64: short, exactly full, wrapped.
  for (int length : {0, 1, 2, 7, 8, 9, 33, 64, 65, 129, 256, 300})
    check_features<Space, Real>(hpt::test::random_steps(rng, {length}), 1, 256, 64);
}

TYPED_TEST(EncodeRich, BatchedRunsWithDifferentHistories) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(32);
  check_features<Space, Real>(hpt::test::random_steps(rng, {3, 70, 280}), 3, 256, 64);
  std::vector<int> lengths(257);
  std::uniform_int_distribution<int> len(0, 110);
  for (int& l : lengths) l = len(rng);
  lengths[0] = 0;
  lengths[256] = 110;
  // Capacities below the 128-window, so windows fall back to the whole (wrapped) history.
  check_features<Space, Real>(hpt::test::random_steps(rng, lengths), 257, 48, 20);
}

// Series per thread runs the thread-per-run walks, one per thread: the same bits, for run counts
// around a warp's 32.
TYPED_TEST(EncodeRich, SeriesPerThreadEqualsThreadPerRunBitForBit) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(37);
  for (int runs : {1, 31, 64, 97}) {
    std::vector<int> lengths(runs);
    std::uniform_int_distribution<int> len(0, 300);
    for (int& l : lengths) l = len(rng);
    const auto steps = hpt::test::random_steps(rng, lengths);
    const auto a = encode<Space, Real>(steps, runs, 256, 64, hpt::RunLayout::ThreadPerRun);
    const auto b = encode<Space, Real>(steps, runs, 256, 64, hpt::RunLayout::SeriesPerThread);
    for (int r = 0; r < runs; ++r) {
      for (int f = 0; f < hpt::kFeatures; ++f)
        ASSERT_EQ(a.raw(r, f), b.raw(r, f)) << runs << " runs, run " << r << " feature " << f;
      ASSERT_EQ(a.states(r).count, b.states(r).count) << r;
      ASSERT_EQ(a.states(r).ema64, b.states(r).ema64) << r;
      ASSERT_EQ(a.states(r).std32, b.states(r).std32) << r;
      for (int k = 0; k < hpt::kLossWindow; ++k)
        ASSERT_EQ(a.states(r).window[k], b.states(r).window[k]) << r << " window " << k;
    }
  }
}

TYPED_TEST(EncodeRich, LargeHistoryUsesLevelOneScratch) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(33);
  ASSERT_EQ(rf::Scratch<Space>::level(4096, 64), 1);
  check_features<Space, Real>(hpt::test::random_steps(rng, {500, 40}), 2, 4096, 64);
}

TYPED_TEST(EncodeRich, ValidationFeaturesWithAndWithoutValidationLosses) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(34);
  auto steps = hpt::test::random_steps(rng, {60, 60, 60});
  for (int t = 0; t < 60; ++t) {
    steps[t][0].has_val_loss = false;        // never validated
    steps[t][1].has_val_loss = t == 30;      // exactly one validation loss
    steps[t][2].has_val_loss = t % 10 == 9;  // six of them
  }
  check_features<Space, Real>(steps, 3, 256, 64);
  for (const auto layout : kLayouts) {
    const auto e = encode<Space, Real>(steps, 3, 256, 64, layout);
    EXPECT_EQ(e.raw(0, rf::kValAvailable), Real(0));
    EXPECT_EQ(e.raw(0, rf::kValLogLoss), Real(0));
    EXPECT_EQ(e.raw(0, rf::kGenGap), Real(0));
    EXPECT_EQ(e.raw(1, rf::kValAvailable), Real(1));
    EXPECT_EQ(e.raw(1, rf::kValTrend), Real(0));  // fewer than two validation losses
    EXPECT_NE(e.raw(2, rf::kValTrend), Real(0));
  }
}

TYPED_TEST(EncodeRich, LossStateMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(35);
  const std::vector<int> lengths{0, 1, 5, 8, 40, 300};
  for (const auto layout : kLayouts) {
    SCOPED_TRACE(name(layout));
    const auto e = encode<Space, Real>(hpt::test::random_steps(rng, lengths), 6, 256, 64, layout);
    const double tol = hpt::test::tolerance<Real>(256);
    for (int r = 0; r < 6; ++r) {
      const auto L = logs(HostRun::newest(e.host[r].loss, 256), kLossFloor);
      const LossState<Real>& s = e.states(r);
      const std::size_t n = L.size();
      const int real = int(std::min<std::size_t>(n, hpt::kLossWindow));
      ASSERT_EQ(s.count, real) << "run " << r;
      if (n == 0) {
        EXPECT_EQ(s.log_loss, Real(0));
        EXPECT_EQ(s.ema16, Real(0));
        continue;
      }
      EXPECT_TRUE(hpt::test::near_rel(s.log_loss, L.back(), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.ema4, ema(L, 4), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.ema16, ema(L, 16), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.ema64, ema(L, 64), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.best, *std::min_element(L.begin(), L.end()), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.first, L.front(), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.mean32, mean(tail(L, 32)), tol)) << r;
      EXPECT_TRUE(hpt::test::near_rel(s.std32, pop_std(tail(L, 32)), tol)) << r;
      for (int k = 0; k < hpt::kLossWindow; ++k) {
        const int from_back = hpt::kLossWindow - 1 - k;
        const double want = from_back < real ? L[n - 1 - from_back] : 0.0;
        EXPECT_TRUE(hpt::test::near_rel(s.window[k], want, tol)) << r << " window " << k;
      }
      // The state continues the features: the rollout's first recomputation starts from these.
      EXPECT_TRUE(hpt::test::near_rel(e.raw(r, rf::kLossEmaGap16), s.log_loss - s.ema16, 4 * tol));
    }
  }
}

TYPED_TEST(EncodeRich, DegenerateInputsNeverGiveNaNOrInf) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(36);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double huge = double(std::numeric_limits<Real>::max()) * 0.5;
  // Runs: 0 fresh, 1 all zeros, 2 huge values, 3 NaN and Inf inside, 4 negative/odd values,
  // 5 a single record with nothing but scalars.
  auto steps = hpt::test::random_steps(rng, {0, 70, 70, 70, 70, 1});
  for (int t = 0; t < 70; ++t) {
    TelemetryRecord& z = steps[t][1];
    z.loss = z.val_loss = z.grad_norm = z.update_norm = z.weight_norm = z.update_cos = 0.0;
    z.lr = z.effective_lr = z.moment_mean = z.moment_std = z.variance_mean = z.variance_std = 0.0;
    z.grad_tensor_log_std = z.grad_tensor_log_range = z.forecast_error = 0.0;
    z.has_loss = z.has_grad = z.has_update = z.has_update_cos = z.has_val_loss = true;
    TelemetryRecord& h = steps[t][2];
    h.loss = h.val_loss = h.grad_norm = h.update_norm = h.weight_norm = huge;
    h.lr = h.moment_mean = h.moment_std = h.variance_mean = huge;
    h.has_loss = h.has_grad = h.has_update = h.has_val_loss = true;
    TelemetryRecord& q = steps[t][3];
    q.loss = t % 3 == 0 ? nan : (t % 3 == 1 ? inf : 1.0);
    q.grad_norm = t % 2 ? inf : nan;
    q.update_norm = nan;
    q.val_loss = inf;
    q.forecast_error = nan;
    q.has_forecast_error = q.has_loss = q.has_grad = q.has_update = q.has_val_loss = true;
    TelemetryRecord& o = steps[t][4];
    o.loss = -1.0 - t;
    o.grad_norm = -2.0;
    o.weight_norm = 0.0;
    o.variance_mean = -1.0;
    o.lr = -1e-3;
    o.has_loss = o.has_grad = o.has_update = true;
  }
  steps[0][5].has_loss = steps[0][5].has_grad = steps[0][5].has_update = false;
  steps[0][5].has_update_cos = steps[0][5].has_val_loss = false;
  for (const auto layout : kLayouts) {
    SCOPED_TRACE(name(layout));
    const auto e = encode<Space, Real>(steps, 6, 256, 64, layout);
    for (int r = 0; r < 6; ++r) {
      for (int f = 0; f < hpt::kFeatures; ++f)
        EXPECT_TRUE(std::isfinite(e.raw(r, f))) << "run " << r << " feature " << f;
      const LossState<Real>& s = e.states(r);
      const Real values[] = {s.log_loss, s.ema4,  s.ema16,  s.ema64,
                             s.best,     s.first, s.mean32, s.std32};
      for (Real v : values) EXPECT_TRUE(std::isfinite(v)) << "run " << r;
      for (int k = 0; k < hpt::kLossWindow; ++k) EXPECT_TRUE(std::isfinite(s.window[k])) << r;
    }
    // A fresh run encodes to all zeros (every value is missing).
    for (int f = 0; f < hpt::kFeatures; ++f) EXPECT_EQ(e.raw(0, f), Real(0)) << "feature " << f;
    // Zeros: log floors, not -inf.
    EXPECT_EQ(e.raw(1, rf::kLogLoss), Real(std::log(1e-12)));
    // Zeros, odd values and a scalars-only record still match the host formulas exactly.
    const double tol = hpt::test::tolerance<Real>(256);
    for (int r : {1, 4, 5}) {
      const auto want = host_rich(e.host[r], 256, 64);
      for (int f = 0; f < hpt::kFeatures; ++f)
        EXPECT_TRUE(hpt::test::near_rel(double(e.raw(r, f)), as_output<Real>(want[f]), tol))
            << "run " << r << " feature " << f;
    }
  }
}

}  // namespace
