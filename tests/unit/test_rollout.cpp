// Ensemble rollout (docs/method.md#ensemble-rollout) against a host rollout written here in double
// (same counter-based draws), both feature-update modes and both reset conventions; bit-identical
// results on Serial and OpenMP; rollout statistics against numpy-style host formulas (sort + linear
// quantile); properties.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/rng.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/rich_features.hpp"
#include "kernels/rollout_statistics.hpp"
#include "test_rollout_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::FeatureUpdate;
using hpt::GruReset;

// ---------------------------------------------------------------- host model and reference rollout

struct HostModel {
  int E, H, S, I;
  std::vector<double> w_ih, w_hh, b_ih, b_hh;  // (E,3H,I) (E,3H,H) (E,3H) (E,3H), rows r, z, n
  std::vector<double> A, a, Bw, b;             // (E,S,H) (E,S) (E,S,H) (E,S)
  std::vector<double> C, d;                    // (E,2,H+S) (E,2)
};

struct HostStart {
  std::vector<double> h0;             // (E,H)
  std::vector<double> x0;             // (I)
  std::vector<double> mean, inv_std;  // (I)
  // loss state
  double l, ema4, ema16, ema64, best, first, mean32, std32;
  std::vector<double> window;  // the real entries, oldest first (at most 8)
};

struct HostResult {
  std::vector<double> paths;      // (N,E,Y+1)
  std::vector<double> final_h;    // (N,E,H)
  std::vector<double> norms;      // (N,E,Y)
  std::vector<double> mean_norm;  // (Y)
};

double sigmoid_ref(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}
double softplus_ref(double v) {
  return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

// Least-squares slope of y against 0..n-1 (closed form, not centred).
double slope_ref(const std::vector<double>& y) {
  const double n = double(y.size());
  if (y.size() < 2) return 0.0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    sx += double(i);
    sy += y[i];
    sxx += double(i) * double(i);
    sxy += double(i) * y[i];
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::vector<double> gru_ref(const HostModel& p, int m, GruReset reset, const std::vector<double>& h,
                            const std::vector<double>& x) {
  const int H = p.H, I = p.I;
  std::vector<double> wx(3 * H), uh(3 * H), r(H), out(H);
  for (int row = 0; row < 3 * H; ++row) {
    double s1 = 0, s2 = 0;
    for (int k = 0; k < I; ++k) s1 += p.w_ih[(size_t(m) * 3 * H + row) * I + k] * x[k];
    for (int k = 0; k < H; ++k) s2 += p.w_hh[(size_t(m) * 3 * H + row) * H + k] * h[k];
    wx[row] = s1;
    uh[row] = s2;
  }
  auto bi = [&](int row) { return p.b_ih[size_t(m) * 3 * H + row]; };
  auto bh = [&](int row) { return p.b_hh[size_t(m) * 3 * H + row]; };
  for (int j = 0; j < H; ++j) r[j] = sigmoid_ref(wx[j] + bi(j) + uh[j] + bh(j));
  for (int j = 0; j < H; ++j) {
    const double z = sigmoid_ref(wx[H + j] + bi(H + j) + uh[H + j] + bh(H + j));
    if (reset == GruReset::After) {  // PyTorch's nn.GRUCell
      const double n =
          std::tanh(wx[2 * H + j] + bi(2 * H + j) + r[j] * (uh[2 * H + j] + bh(2 * H + j)));
      out[j] = (1 - z) * n + z * h[j];
    } else {  // the prototype
      double s = 0;
      for (int k = 0; k < H; ++k)
        s += p.w_hh[(size_t(m) * 3 * H + 2 * H + j) * H + k] * r[k] * h[k];
      const double n = std::tanh(wx[2 * H + j] + s + bi(2 * H + j) + bh(2 * H + j));
      out[j] = (1 - z) * h[j] + z * n;
    }
  }
  return out;
}

HostResult rollout_ref(const HostModel& p, const HostStart& st, GruReset reset, FeatureUpdate mode,
                       int N, int Y, std::uint64_t seed, double clamp) {
  const int E = p.E, H = p.H, S = p.S;
  HostResult res;
  res.paths.assign(size_t(N) * E * (Y + 1), 0.0);
  res.final_h.assign(size_t(N) * E * H, 0.0);
  res.norms.assign(size_t(N) * E * Y, 0.0);
  res.mean_norm.assign(Y, 0.0);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < E; ++m) {
      std::vector<double> h(st.h0.begin() + size_t(m) * H, st.h0.begin() + size_t(m + 1) * H);
      std::vector<double> x = st.x0, window = st.window;
      double l = st.l, ema4 = st.ema4, ema16 = st.ema16, ema64 = st.ema64, best = st.best;
      const size_t path = size_t(n) * E + m;
      res.paths[path * (Y + 1)] = std::exp(l);
      for (int k = 1; k <= Y; ++k) {
        h = gru_ref(p, m, reset, h, x);
        std::vector<double> s(S);
        for (int i = 0; i < S; ++i) {
          double mu = p.a[size_t(m) * S + i], pre = p.b[size_t(m) * S + i];
          for (int j = 0; j < H; ++j) {
            mu += p.A[(size_t(m) * S + i) * H + j] * h[j];
            pre += p.Bw[(size_t(m) * S + i) * H + j] * h[j];
          }
          const double eps = hpt::rng::normal(hpt::rng::key(seed, n, m, k, i));
          s[i] = mu + (softplus_ref(pre) + 1e-4) * eps;
        }
        double mu = p.d[size_t(m) * 2], lv = p.d[size_t(m) * 2 + 1], norm2 = 0;
        for (int j = 0; j < H + S; ++j) {
          const double c = j < H ? h[j] : s[j - H];
          mu += p.C[(size_t(m) * 2 + 0) * (H + S) + j] * c;
          lv += p.C[(size_t(m) * 2 + 1) * (H + S) + j] * c;
        }
        for (int j = 0; j < H; ++j) norm2 += h[j] * h[j];
        lv = std::min(20.0, std::max(-20.0, lv));
        const double delta =
            mu + std::exp(0.5 * lv) * hpt::rng::normal(hpt::rng::key(seed, n, m, k, S));
        l += delta;
        ema4 += (l - ema4) / 4;
        ema16 += (l - ema16) / 16;
        ema64 += (l - ema64) / 64;
        best = std::min(best, l);
        window.push_back(l);
        if (window.size() > 8) window.erase(window.begin());
        if (mode == FeatureUpdate::LossOnly) {
          x[0] = std::exp(l);
        } else {
          auto put = [&](int idx, double raw) {
            x[idx] = std::min(clamp, std::max(-clamp, (raw - st.mean[idx]) * st.inv_std[idx]));
          };
          put(hpt::rich::kLogLoss, l);
          put(hpt::rich::kLossSlope8, slope_ref(window));
          put(hpt::rich::kLossEmaGap4, l - ema4);
          put(hpt::rich::kLossEmaGap16, l - ema16);
          put(hpt::rich::kLossEmaGap64, l - ema64);
          put(hpt::rich::kLossBestGap, l - best);
          put(hpt::rich::kLossLastDelta, delta);
          put(hpt::rich::kLossZ32, (l - st.mean32) / (st.std32 + 1e-8));
          put(hpt::rich::kLossProgress, st.first - l);
        }
        res.paths[path * (Y + 1) + k] = std::exp(l);
        res.norms[path * Y + (k - 1)] = std::sqrt(norm2);
        res.mean_norm[k - 1] += std::sqrt(norm2) / (double(N) * E);
      }
      std::copy(h.begin(), h.end(), res.final_h.begin() + path * H);
    }
  return res;
}

// ---------------------------------------------------------------- random problems

template <class Real>
void random_fill(std::vector<double>& v, size_t count, std::mt19937& gen, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  v.resize(count);
  for (auto& e : v) e = double(Real(dist(gen)));  // exactly representable in Real
}

template <class Real>
HostModel random_model(int E, int H, int S, int I, std::mt19937& gen) {
  HostModel p{E, H, S, I, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const double g = 1.0 / std::sqrt(double(H));
  random_fill<Real>(p.w_ih, size_t(E) * 3 * H * I, gen, -g, g);
  random_fill<Real>(p.w_hh, size_t(E) * 3 * H * H, gen, -g, g);
  random_fill<Real>(p.b_ih, size_t(E) * 3 * H, gen, -g, g);
  random_fill<Real>(p.b_hh, size_t(E) * 3 * H, gen, -g, g);
  random_fill<Real>(p.A, size_t(E) * S * H, gen, -0.4, 0.4);
  random_fill<Real>(p.a, size_t(E) * S, gen, -0.2, 0.2);
  random_fill<Real>(p.Bw, size_t(E) * S * H, gen, -0.4, 0.4);
  random_fill<Real>(p.b, size_t(E) * S, gen, -1.0, 0.0);
  random_fill<Real>(p.C, size_t(E) * 2 * (H + S), gen, -0.1, 0.1);
  p.d.resize(size_t(E) * 2);
  for (int m = 0; m < E; ++m) {  // mean change slightly negative, std of the change about 0.1
    p.d[2 * m] = double(Real(-0.02 - 0.01 * m));
    p.d[2 * m + 1] = double(Real(-4.5 + 0.25 * m));
  }
  return p;
}

template <class Real>
HostStart random_start(const HostModel& p, int window_count, std::mt19937& gen) {
  HostStart st;
  random_fill<Real>(st.h0, size_t(p.E) * p.H, gen, -0.8, 0.8);
  random_fill<Real>(st.x0, p.I, gen, -2.0, 2.0);
  random_fill<Real>(st.mean, p.I, gen, -0.3, 0.3);
  random_fill<Real>(st.inv_std, p.I, gen, 0.5, 3.0);
  auto r = [](double v) { return double(Real(v)); };
  st.l = r(std::log(0.9));
  st.ema4 = r(st.l + 0.03);
  st.ema16 = r(st.l + 0.11);
  st.ema64 = r(st.l + 0.35);
  st.best = r(st.l - 0.02);
  st.first = r(st.l + 1.3);
  st.mean32 = r(st.l + 0.07);
  st.std32 = r(0.05);
  for (int i = 0; i < window_count; ++i)
    st.window.push_back(r(st.l + 0.013 * (window_count - 1 - i) + (i % 2 ? 0.004 : -0.003)));
  if (window_count > 0) st.window.back() = st.l;
  return st;
}

template <class View>
void upload(const View& v, const std::vector<double>& values) {
  auto mirror = Kokkos::create_mirror_view(v);
  ASSERT_EQ(mirror.span(), values.size());
  using T = typename View::non_const_value_type;
  for (size_t i = 0; i < values.size(); ++i) mirror.data()[i] = T(values[i]);
  Kokkos::deep_copy(v, mirror);
}

using hpt::test::download;

// Device copy of a host problem.
template <class Real, class Mem>
struct DeviceRollout {
  hpt::RssmParams<Real, Mem> params;
  hpt::View2<Real, Mem> h0;
  hpt::RolloutInputs<Real, Mem> in;

  DeviceRollout(const HostModel& p, const HostStart& st)
      : params(p.E, p.H, p.S, p.I), h0("h0", p.E, p.H) {
    upload(params.gru.w_ih, p.w_ih);
    upload(params.gru.w_hh, p.w_hh);
    upload(params.gru.b_ih, p.b_ih);
    upload(params.gru.b_hh, p.b_hh);
    upload(params.prior_mean_w, p.A);
    upload(params.prior_mean_b, p.a);
    upload(params.prior_scale_w, p.Bw);
    upload(params.prior_scale_b, p.b);
    upload(params.loss_head_w, p.C);
    upload(params.loss_head_b, p.d);
    upload(h0, st.h0);
    in.x0 = hpt::View1<Real, Mem>("x0", p.I);
    in.norm_mean = hpt::View1<Real, Mem>("mean", p.I);
    in.norm_inv_std = hpt::View1<Real, Mem>("inv_std", p.I);
    upload(in.x0, st.x0);
    upload(in.norm_mean, st.mean);
    upload(in.norm_inv_std, st.inv_std);
    // Two runs; the rollout must read run 1.
    in.loss_states = hpt::View1<hpt::LossState<Real>, Mem>("loss_states", 2);
    in.run = 1;
    auto states = Kokkos::create_mirror_view(in.loss_states);
    hpt::LossState<Real> ls{};
    ls.log_loss = Real(st.l);
    ls.ema4 = Real(st.ema4);
    ls.ema16 = Real(st.ema16);
    ls.ema64 = Real(st.ema64);
    ls.best = Real(st.best);
    ls.first = Real(st.first);
    ls.mean32 = Real(st.mean32);
    ls.std32 = Real(st.std32);
    const int count = int(st.window.size());
    for (int i = 0; i < hpt::kLossWindow; ++i) ls.window[i] = Real(1e3);  // unused entries
    for (int i = 0; i < count; ++i) ls.window[hpt::kLossWindow - count + i] = Real(st.window[i]);
    ls.count = count;
    states(0) = ls;
    states(0).log_loss = Real(7);  // a different run
    states(1) = ls;
    Kokkos::deep_copy(in.loss_states, states);
  }

  template <class Space>
  hpt::RolloutOutputs<Real, Mem> run(const Space& space, GruReset reset,
                                     const hpt::RolloutSettings& settings) const {
    hpt::RolloutOutputs<Real, Mem> out(settings.scenarios, params.members(), params.hidden(),
                                       settings.horizon);
    hpt::ensemble_rollout(space, params, reset, h0, in, settings, out);
    space.fence();
    return out;
  }
};

struct RolloutCase {
  int H, I, Y, window_count;
  FeatureUpdate mode;
  GruReset reset;
};

const std::vector<RolloutCase> kRolloutCases = {
    {8, 64, 5, 3, FeatureUpdate::Rich, GruReset::After},
    {16, 64, 20, 8, FeatureUpdate::Rich, GruReset::Before},
    {32, 64, 11, 1, FeatureUpdate::Rich, GruReset::After},
    {32, 5, 12, 8, FeatureUpdate::LossOnly, GruReset::After},
    {13, 64, 7, 0, FeatureUpdate::LossOnly, GruReset::Before},
};

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const auto ok = hpt::test::near_rel(got[i], want[i], tol);
    if (!ok) ++bad;
    EXPECT_TRUE(ok) << what << " element " << i;
  }
}

template <class T>
class Rollout : public ::testing::Test {};
TYPED_TEST_SUITE(Rollout, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(Rollout, MatchesHostReference) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 2, N = 3, S = 4;
  std::mt19937 gen(2024);
  for (const auto& c : kRolloutCases) {
    const auto model = random_model<Real>(E, c.H, S, c.I, gen);
    const auto start = random_start<Real>(model, c.window_count, gen);
    DeviceRollout<Real, Mem> dev(model, start);
    hpt::RolloutSettings settings;
    settings.horizon = c.Y;
    settings.scenarios = N;
    settings.seed = 77 + c.H;
    settings.feature_update = c.mode;
    settings.clamp = 3.0;
    const auto out = dev.run(Space(), c.reset, settings);
    const auto want =
        rollout_ref(model, start, c.reset, c.mode, N, c.Y, settings.seed, settings.clamp);
    // Errors of the recurrent products compound along the path.
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I);
    SCOPED_TRACE(::testing::Message() << "H=" << c.H << " I=" << c.I << " Y=" << c.Y
                                      << " mode=" << int(c.mode) << " reset=" << int(c.reset));
    expect_close(download(out.loss_paths), want.paths, tol, "loss_paths");
    expect_close(download(out.final_latents), want.final_h, tol, "final_latents");
    expect_close(download(out.hidden_norms), want.norms, tol, "hidden_norms");
    expect_close(download(out.mean_hidden_norm), want.mean_norm, tol, "mean_hidden_norm");
  }
}

// mean_hidden_norm over more paths than one of its chunks (N x E = 335: two whole chunks of
// kHiddenNormChunk = 128 and a partial one) against a plain host mean in double.
TYPED_TEST(Rollout, MeanHiddenNormOverChunks) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int N = 67, E = 5, Y = 7;
  static_assert(N * E > 2 * hpt::detail::kHiddenNormChunk, "three chunks, the last partial");
  hpt::RolloutOutputs<Real, Mem> out(N, E, 1, Y);
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(0.5, 20.0);
  const auto norms = Kokkos::create_mirror_view(out.hidden_norms);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < E; ++m)
      for (int k = 0; k < Y; ++k) norms(n, m, k) = Real(u(gen));
  Kokkos::deep_copy(out.hidden_norms, norms);
  hpt::detail::mean_hidden_norm(Space(), out);
  const auto got = download(out.mean_hidden_norm);
  ASSERT_EQ(got.size(), std::size_t(Y));
  for (int k = 0; k < Y; ++k) {
    double sum = 0;
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < E; ++m) sum += double(norms(n, m, k));
    EXPECT_TRUE(
        hpt::test::near_rel(got[k], double(Real(sum / (N * E))), hpt::test::tolerance<Real>(N * E)))
        << "step " << k << ": " << got[k] << " vs " << sum / (N * E);
  }
}

// Horizon 0: every path is the current loss alone and the latents do not move.
TYPED_TEST(Rollout, ZeroHorizonGivesTheCurrentLoss) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(5);
  const auto model = random_model<Real>(3, 9, 4, 64, gen);
  const auto start = random_start<Real>(model, 8, gen);
  DeviceRollout<Real, Mem> dev(model, start);
  hpt::RolloutSettings settings;
  settings.horizon = 0;
  settings.scenarios = 4;
  const auto out = dev.run(Space(), GruReset::After, settings);
  const auto paths = download(out.loss_paths);
  ASSERT_EQ(paths.size(), 4u * 3u);
  for (const double L : paths) EXPECT_EQ(L, double(Real(std::exp(Real(start.l)))));
  const auto latents = download(out.final_latents);
  for (int n = 0; n < 4; ++n)
    for (size_t i = 0; i < start.h0.size(); ++i)
      EXPECT_EQ(latents[n * start.h0.size() + i], start.h0[i]);
  EXPECT_EQ(out.hidden_norms.extent(2), 0u);
}

// A longer rollout in both modes stays finite everywhere.
TYPED_TEST(Rollout, OutputsAreFinite) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(17);
  const auto model = random_model<Real>(2, 24, 6, 64, gen);
  const auto start = random_start<Real>(model, 5, gen);
  DeviceRollout<Real, Mem> dev(model, start);
  for (const auto mode : {FeatureUpdate::Rich, FeatureUpdate::LossOnly}) {
    hpt::RolloutSettings settings;
    settings.horizon = 60;
    settings.scenarios = 5;
    settings.feature_update = mode;
    const auto out = dev.run(Space(), GruReset::Before, settings);
    for (const auto& v : {download(out.loss_paths), download(out.final_latents),
                          download(out.hidden_norms), download(out.mean_hidden_norm)})
      for (const double e : v) ASSERT_TRUE(std::isfinite(e));
    // Different scenarios must differ (the stochastic path is really sampled).
    const auto paths = download(out.loss_paths);
    EXPECT_NE(paths[60], paths[2 * 61 + 60]);
  }
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
// Same process, same inputs: Serial, OpenMP with Kokkos' team size and OpenMP with 2-thread teams
// give bit-identical rollouts.
template <class Real>
void check_serial_openmp_identical() {
  using Mem = Kokkos::HostSpace;
  static_assert(std::is_same<Kokkos::Serial::memory_space, Mem>::value, "host memory");
  static_assert(std::is_same<Kokkos::OpenMP::memory_space, Mem>::value, "host memory");
  std::mt19937 gen(99);
  const auto model = random_model<Real>(2, 20, 4, 64, gen);
  const auto start = random_start<Real>(model, 6, gen);
  DeviceRollout<Real, Mem> dev(model, start);
  for (const auto mode : {FeatureUpdate::Rich, FeatureUpdate::LossOnly})
    for (const auto reset : {GruReset::After, GruReset::Before}) {
      hpt::RolloutSettings settings;
      settings.horizon = 15;
      settings.scenarios = 3;
      settings.feature_update = mode;
      const auto serial = dev.run(Kokkos::Serial(), reset, settings);
      const auto omp_auto = dev.run(Kokkos::OpenMP(), reset, settings);
      settings.team_size = Kokkos::OpenMP().concurrency() >= 2 ? 2 : 1;
      const auto omp_two = dev.run(Kokkos::OpenMP(), reset, settings);
      for (const auto* other : {&omp_auto, &omp_two}) {
        EXPECT_EQ(download(serial.loss_paths), download(other->loss_paths));
        EXPECT_EQ(download(serial.final_latents), download(other->final_latents));
        EXPECT_EQ(download(serial.hidden_norms), download(other->hidden_norms));
        EXPECT_EQ(download(serial.mean_hidden_norm), download(other->mean_hidden_norm));
      }
    }
}

TEST(RolloutDeterminism, SerialAndOpenMPBitIdenticalFloat) {
  check_serial_openmp_identical<float>();
}
TEST(RolloutDeterminism, SerialAndOpenMPBitIdenticalDouble) {
  check_serial_openmp_identical<double>();
}
#endif

// ---------------------------------------------------------------- statistics

struct HostStatistics {
  std::vector<double> mean, q05, q50, q95, alea, epi, total_std, step_delta, traj_var;
  double smoothness;
};

double numpy_quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double t = pos - double(lo), a = v[lo], b = v[hi];
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

HostStatistics statistics_ref(const std::vector<double>& L, int N, int E, int Y) {
  HostStatistics r;
  const double P = double(N) * E;
  auto at = [&](int n, int m, int k) { return L[(size_t(n) * E + m) * (Y + 1) + k]; };
  double curvature = 0;
  for (int k = 0; k <= Y; ++k) {
    std::vector<double> all;
    double sum = 0, delta = 0;
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < E; ++m) {
        all.push_back(at(n, m, k));
        sum += at(n, m, k);
        if (k > 0) delta += std::fabs(at(n, m, k) - at(n, m, k - 1));
        if (k > 0 && k < Y)
          curvature += std::fabs(at(n, m, k + 1) - 2 * at(n, m, k) + at(n, m, k - 1));
      }
    const double mean = sum / P;
    double var = 0;
    for (const double v : all) var += (v - mean) * (v - mean);
    std::vector<double> member_mean(E, 0.0), member_var(E, 0.0);
    for (int m = 0; m < E; ++m) {
      for (int n = 0; n < N; ++n) member_mean[m] += std::log(at(n, m, k)) / N;
      for (int n = 0; n < N; ++n)
        member_var[m] += std::pow(std::log(at(n, m, k)) - member_mean[m], 2) / N;
    }
    double alea = 0, grand = 0, epi = 0;
    for (int m = 0; m < E; ++m) {
      alea += member_var[m] / E;
      grand += member_mean[m] / E;
    }
    for (int m = 0; m < E; ++m) epi += std::pow(member_mean[m] - grand, 2) / E;
    r.mean.push_back(mean);
    r.traj_var.push_back(var / P);
    r.q05.push_back(numpy_quantile(all, 0.05));
    r.q50.push_back(numpy_quantile(all, 0.5));
    r.q95.push_back(numpy_quantile(all, 0.95));
    r.alea.push_back(alea);
    r.epi.push_back(epi);
    r.total_std.push_back(std::sqrt(alea + epi));
    r.step_delta.push_back(k > 0 ? delta / P : 0.0);
  }
  r.smoothness = Y >= 2 ? curvature / (P * (Y - 1)) : 0.0;
  return r;
}

// Random log-normal paths with per-member offsets; `levels` > 0 rounds values onto a grid (ties).
template <class Real>
std::vector<double> random_paths(int N, int E, int Y, std::mt19937& gen, double levels) {
  std::normal_distribution<double> noise(0.0, 0.25);
  std::vector<double> L(size_t(N) * E * (Y + 1));
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < E; ++m) {
      double l = std::log(1.5) + 0.1 * m;
      for (int k = 0; k <= Y; ++k) {
        double v = std::exp(l);
        if (levels > 0) v = std::round(v * levels) / levels;
        L[(size_t(n) * E + m) * (Y + 1) + k] = double(Real(v));
        l += -0.03 + noise(gen);
      }
    }
  return L;
}

// Relative comparison for statistics (values may be far below 1); the absolute floor only absorbs
// round-off of a variance that is zero in exact arithmetic.
::testing::AssertionResult rel_close(double a, double b, double tol) {
  if (std::fabs(a - b) <= tol * std::fabs(b) + 1e-20) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs reference " << b << " (rel tol " << tol << ")";
}

template <class Real, class Mem, class Space>
hpt::RolloutStatistics<Real, Mem> device_statistics(const Space& space,
                                                    const std::vector<double>& L, int N, int E,
                                                    int Y) {
  hpt::View3<Real, Mem> paths("paths", N, E, Y + 1);
  upload(paths, L);
  hpt::RolloutStatistics<Real, Mem> stats(E, Y);
  hpt::compute_rollout_statistics(space, paths, stats);
  space.fence();
  return stats;
}

template <class T>
class RolloutStats : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutStats, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RolloutStats, MatchHostFormulas) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  struct Case {
    int N, E, Y;
    double levels;
  };
  // Small, chunked (301 scenarios: chunks of 5, the last one partial), and with many ties.
  const std::vector<Case> cases = {{3, 2, 5, 0}, {7, 3, 6, 0}, {301, 2, 4, 0}, {40, 5, 3, 10}};
  std::mt19937 gen(7);
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "N=" << c.N << " E=" << c.E << " Y=" << c.Y);
    const auto L = random_paths<Real>(c.N, c.E, c.Y, gen, c.levels);
    const auto want = statistics_ref(L, c.N, c.E, c.Y);
    const auto stats = device_statistics<Real, Mem>(Space(), L, c.N, c.E, c.Y);
    const double tol = hpt::test::tolerance<Real>(c.N * c.E);
    const auto mean = download(stats.mean_loss), alea = download(stats.aleatoric_var),
               epi = download(stats.epistemic_var), total = download(stats.total_std),
               delta = download(stats.mean_step_delta), traj = download(stats.trajectory_var),
               quant = download(stats.loss_quantiles), smooth = download(stats.smoothness);
    for (int k = 0; k <= c.Y; ++k) {
      EXPECT_TRUE(rel_close(mean[k], want.mean[k], tol)) << "mean k=" << k;
      EXPECT_TRUE(rel_close(alea[k], want.alea[k], tol)) << "aleatoric k=" << k;
      EXPECT_TRUE(rel_close(epi[k], want.epi[k], tol)) << "epistemic k=" << k;
      EXPECT_TRUE(rel_close(total[k], want.total_std[k], tol)) << "total std k=" << k;
      EXPECT_TRUE(rel_close(delta[k], want.step_delta[k], tol)) << "step delta k=" << k;
      EXPECT_TRUE(rel_close(traj[k], want.traj_var[k], tol)) << "trajectory var k=" << k;
      EXPECT_TRUE(rel_close(quant[3 * k + 0], want.q05[k], tol)) << "q05 k=" << k;
      EXPECT_TRUE(rel_close(quant[3 * k + 1], want.q50[k], tol)) << "q50 k=" << k;
      EXPECT_TRUE(rel_close(quant[3 * k + 2], want.q95[k], tol)) << "q95 k=" << k;
    }
    EXPECT_TRUE(rel_close(smooth[0], want.smoothness, tol)) << "smoothness";
    EXPECT_EQ(delta[0], 0.0);
    // Law of total variance: aleatoric + epistemic is the variance of log L over all paths.
    for (int k = 0; k <= c.Y; ++k) {
      double s = 0, s2 = 0;
      for (int n = 0; n < c.N; ++n)
        for (int m = 0; m < c.E; ++m) {
          const double l = std::log(L[(size_t(n) * c.E + m) * (c.Y + 1) + k]);
          s += l;
          s2 += l * l;
        }
      const double P = double(c.N) * c.E, var = s2 / P - (s / P) * (s / P);
      EXPECT_NEAR(alea[k] + epi[k], var, 1e-4 * var + 1e-9) << "k=" << k;
    }
  }
}

// One path: no spread at all; every quantile is the path itself.
TYPED_TEST(RolloutStats, SinglePathHasZeroVariances) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(3);
  const int Y = 6;
  const auto L = random_paths<Real>(1, 1, Y, gen, 0);
  const auto stats = device_statistics<Real, Mem>(Space(), L, 1, 1, Y);
  const auto alea = download(stats.aleatoric_var), epi = download(stats.epistemic_var),
             traj = download(stats.trajectory_var), total = download(stats.total_std),
             quant = download(stats.loss_quantiles), mean = download(stats.mean_loss);
  for (int k = 0; k <= Y; ++k) {
    EXPECT_EQ(alea[k], 0.0);
    EXPECT_EQ(epi[k], 0.0);
    EXPECT_EQ(traj[k], 0.0);
    EXPECT_EQ(total[k], 0.0);
    EXPECT_EQ(mean[k], L[k]);
    for (int q = 0; q < 3; ++q) EXPECT_EQ(quant[3 * k + q], L[k]);
  }
}

// Statistics of a real rollout: horizon 0 has no spread; every output is finite.
TYPED_TEST(RolloutStats, OfARolloutAreFiniteAndStartSharp) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(41);
  const auto model = random_model<Real>(3, 16, 4, 64, gen);
  const auto start = random_start<Real>(model, 8, gen);
  DeviceRollout<Real, Mem> dev(model, start);
  hpt::RolloutSettings settings;
  settings.horizon = 12;
  settings.scenarios = 6;
  const auto out = dev.run(Space(), GruReset::After, settings);
  hpt::RolloutStatistics<Real, Mem> stats(3, 12);
  hpt::compute_rollout_statistics(Space(), out.loss_paths, stats);
  Space().fence();
  for (const auto& v :
       {download(stats.mean_loss), download(stats.loss_quantiles), download(stats.aleatoric_var),
        download(stats.epistemic_var), download(stats.total_std), download(stats.mean_step_delta),
        download(stats.trajectory_var), download(stats.smoothness)})
    for (const double e : v) ASSERT_TRUE(std::isfinite(e));
  EXPECT_EQ(download(stats.total_std)[0], 0.0);
  EXPECT_GT(download(stats.total_std)[12], 0.0);
  EXPECT_GT(download(stats.epistemic_var)[12], 0.0);
  EXPECT_GT(download(stats.aleatoric_var)[12], 0.0);
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
template <class Real>
void check_statistics_identical() {
  using Mem = Kokkos::HostSpace;
  std::mt19937 gen(12);
  const auto L = random_paths<Real>(517, 3, 5, gen, 0);
  const auto a = device_statistics<Real, Mem>(Kokkos::Serial(), L, 517, 3, 5);
  const auto b = device_statistics<Real, Mem>(Kokkos::OpenMP(), L, 517, 3, 5);
  EXPECT_EQ(download(a.mean_loss), download(b.mean_loss));
  EXPECT_EQ(download(a.loss_quantiles), download(b.loss_quantiles));
  EXPECT_EQ(download(a.aleatoric_var), download(b.aleatoric_var));
  EXPECT_EQ(download(a.epistemic_var), download(b.epistemic_var));
  EXPECT_EQ(download(a.total_std), download(b.total_std));
  EXPECT_EQ(download(a.mean_step_delta), download(b.mean_step_delta));
  EXPECT_EQ(download(a.trajectory_var), download(b.trajectory_var));
  EXPECT_EQ(download(a.smoothness), download(b.smoothness));
}
TEST(RolloutDeterminism, StatisticsSerialAndOpenMPBitIdentical) {
  check_statistics_identical<float>();
  check_statistics_identical<double>();
}
#endif

}  // namespace
