// `encoder = rich` (SPEC 2.2, rich_features.hpp) against a plain host implementation of every one
// of the 64 formulas written here (recursive EMAs, explicit windows, textbook least squares), on
// random histories (short, exactly full and wrapped rings, with and without validation losses) for
// R = 1, 3 and 257 runs; the loss state against the same host model; and the property that nothing
// non-finite leaves the encoder on degenerate inputs.
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
TYPED_TEST_SUITE(EncodeRich, hpt::test::BackendsAndPrecisions);

// ---- plain host statistics
std::vector<double> tail(const std::vector<double>& v, int w) {
  const std::size_t n = std::min<std::size_t>(v.size(), std::size_t(w));
  return std::vector<double>(v.end() - long(n), v.end());
}
double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}
double pop_std(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size()));
}
// Least-squares slope of v against 0, 1, ..., n-1.
double ls_slope(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 2) return 0.0;
  double sx = 0, sy = 0;
  for (std::size_t k = 0; k < n; ++k) sx += double(k), sy += v[k];
  const double mx = sx / double(n), my = sy / double(n);
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sxy += (double(k) - mx) * (v[k] - my);
    sxx += (double(k) - mx) * (double(k) - mx);
  }
  return sxy / sxx;
}
double ema(const std::vector<double>& v, double tau) {
  double e = v.at(0);
  for (std::size_t k = 1; k < v.size(); ++k) e += (v[k] - e) / tau;
  return e;
}
// Over the newest min(32, n - 1) differences v_k - v_{k-1}.
double increase_fraction32(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  int count = 0, up = 0;
  for (std::size_t k = v.size() - 1; k >= 1 && count < 32; --k, ++count) up += v[k] > v[k - 1];
  return double(up) / double(count);
}
double abs_delta_mean32(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  int count = 0;
  double s = 0;
  for (std::size_t k = v.size() - 1; k >= 1 && count < 32; --k, ++count)
    s += std::fabs(v[k] - v[k - 1]);
  return s / double(count);
}
std::vector<double> logs(const std::vector<double>& v, double floor) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(std::max(x, floor)));
  return out;
}

constexpr double kLossFloor = 1e-12, kTiny = 1e-30;

std::array<double, 64> host_rich(const HostRun& run, int loss_cap, int other_cap) {
  std::array<double, 64> f{};
  const auto L = logs(HostRun::newest(run.loss, loss_cap), kLossFloor);
  const auto G = HostRun::newest(run.grad, other_cap);
  const auto U = HostRun::newest(run.update, other_cap);
  const auto C = HostRun::newest(run.cos, other_cap);
  const auto W = HostRun::newest(run.weight, other_cap);
  const auto lG = logs(G, kTiny), lU = logs(U, kTiny), lW = logs(W, kTiny);
  const bool fresh = run.records == 0;
  const TelemetryRecord& t = run.last;
  const std::size_t n = L.size(), ng = G.size(), nu = U.size(), nc = C.size(), nw = W.size();
  const double lt = n ? L.back() : 0.0;
  // loss group
  f[rf::kLogLoss] = lt;
  f[rf::kLossMean8] = mean(tail(L, 8));
  f[rf::kLossMean32] = mean(tail(L, 32));
  f[rf::kLossMean128] = mean(tail(L, 128));
  f[rf::kLossStd8] = pop_std(tail(L, 8));
  f[rf::kLossStd32] = pop_std(tail(L, 32));
  f[rf::kLossStd128] = pop_std(tail(L, 128));
  f[rf::kLossSlope8] = ls_slope(tail(L, 8));
  f[rf::kLossSlope32] = ls_slope(tail(L, 32));
  f[rf::kLossSlope128] = ls_slope(tail(L, 128));
  f[rf::kLossEmaGap4] = n ? lt - ema(L, 4) : 0.0;
  f[rf::kLossEmaGap16] = n ? lt - ema(L, 16) : 0.0;
  f[rf::kLossEmaGap64] = n ? lt - ema(L, 64) : 0.0;
  f[rf::kLossBestGap] = n ? lt - *std::min_element(L.begin(), L.end()) : 0.0;
  f[rf::kLossIncreaseFrac32] = increase_fraction32(L);
  f[rf::kLossLastDelta] = n >= 2 ? lt - L[n - 2] : 0.0;
  f[rf::kLossAbsDeltaMean32] = abs_delta_mean32(L);
  f[rf::kLossZ32] = n ? (lt - mean(tail(L, 32))) / (pop_std(tail(L, 32)) + 1e-8) : 0.0;
  if (n) {
    const auto w = tail(L, 128);
    f[rf::kLossRange128] =
        *std::max_element(w.begin(), w.end()) - *std::min_element(w.begin(), w.end());
  }
  f[rf::kLossCurvature] = ls_slope(tail(L, 8)) - ls_slope(tail(L, 32));
  f[rf::kLossProgress] = n ? L.front() - lt : 0.0;
  const std::size_t nv = run.val.size();
  const double lval = nv ? std::log(std::max(run.val.back(), kLossFloor)) : 0.0;
  f[rf::kValLogLoss] = lval;
  f[rf::kGenGap] = nv && n ? lval - ema(L, 16) : 0.0;
  f[rf::kValTrend] = nv >= 2 ? lval - std::log(std::max(run.val[nv - 2], kLossFloor)) : 0.0;
  // gradient group
  const double lg = ng ? lG.back() : 0.0;
  f[rf::kLogGrad] = lg;
  f[rf::kGradMean8] = mean(tail(lG, 8));
  f[rf::kGradMean32] = mean(tail(lG, 32));
  f[rf::kGradStd8] = pop_std(tail(lG, 8));
  f[rf::kGradStd32] = pop_std(tail(lG, 32));
  f[rf::kGradSlope8] = ls_slope(tail(lG, 8));
  f[rf::kGradSlope32] = ls_slope(tail(lG, 32));
  if (ng) {
    const auto w = tail(lG, 32);
    f[rf::kGradEmaRatio16] = lg - std::log(std::max(ema(G, 16), kTiny));
    f[rf::kGradMaxGap32] = *std::max_element(w.begin(), w.end()) - lg;
    f[rf::kGradMinGap32] = lg - *std::min_element(w.begin(), w.end());
    f[rf::kGradCv32] = pop_std(tail(G, 32)) / std::max(mean(tail(G, 32)), kTiny);
    f[rf::kLogLrGrad] = std::log(std::max(t.lr * G.back(), kTiny));
  }
  f[rf::kGradIncreaseFrac32] = increase_fraction32(G);
  f[rf::kGradTensorStd] = run.grad_tensor_log_std;
  f[rf::kGradTensorRange] = run.grad_tensor_log_range;
  f[rf::kLogGradOverLoss] = ng && n ? lg - lt : 0.0;
  // optimizer / update group
  const double lu = nu ? lU.back() : 0.0, lw = nw ? lW.back() : 0.0;
  f[rf::kLogLr] = fresh ? 0.0 : std::log(std::max(t.lr, kTiny));
  f[rf::kLogUpdate] = lu;
  f[rf::kLogUpdateOverWeight] = nu && nw ? lu - lw : 0.0;
  f[rf::kLogWeight] = lw;
  f[rf::kUpdateCos] = nc ? C.back() : 0.0;
  f[rf::kUpdateCosMean8] = mean(tail(C, 8));
  f[rf::kUpdateCosMean32] = mean(tail(C, 32));
  f[rf::kUpdateSlope8] = ls_slope(tail(lU, 8));
  f[rf::kUpdateEmaRatio16] = nu ? lu - std::log(std::max(ema(U, 16), kTiny)) : 0.0;
  f[rf::kLogMomentMean] = fresh ? 0.0 : std::log(std::max(t.moment_mean, kTiny));
  const double v = t.variance_mean;
  f[rf::kLogVarianceMean] = v > 0 ? std::log(v) : 0.0;
  f[rf::kMomentSnr] =
      v > 0 ? std::log(std::max(t.moment_mean, kTiny) / (std::sqrt(v) + 1e-8)) : 0.0;
  f[rf::kBeta1Pow] = t.beta1_pow;
  f[rf::kBeta2Pow] = t.beta2_pow;
  f[rf::kWeightSlope32] = ls_slope(tail(lW, 32));
  f[rf::kLogMomentStd] = fresh ? 0.0 : std::log(t.moment_std + 1e-12);
  // context group
  f[rf::kPhaseFull] = t.phase == 1;
  f[rf::kPhasePredict] = t.phase == 2;
  f[rf::kPhaseCorrect] = t.phase == 3;
  f[rf::kStepsInPhase] = double(t.steps_in_phase) / 100.0;
  f[rf::kLogStep] = std::log10(double(t.step) + 1.0);
  f[rf::kPredictedFrac] = t.predicted_frac;
  f[rf::kForecastError] = run.has_forecast_error ? run.forecast_error : 0.0;
  f[rf::kValAvailable] = nv ? 1.0 : 0.0;
  return f;
}

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

// Both layouts of runs on threads must give the host's features.
const hpt::RunLayout kLayouts[] = {hpt::RunLayout::TeamPerRun, hpt::RunLayout::ThreadPerRun};

const char* name(hpt::RunLayout layout) {
  return layout == hpt::RunLayout::TeamPerRun ? "team per run" : "thread per run";
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
