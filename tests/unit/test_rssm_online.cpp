// Online training of the RSSM ensemble (physics-style-modules/dynamics/rssm_online.hpp): the ring
// and window gather against host bookkeeping, the bagging draws, latent filtering against a host
// GRU, the deck options, learning on a synthetic loss curve, and bit-exact continuation from saved
// state.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/rssm_window.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"
#include "physics-style-modules/dynamics/rssm_online.hpp"
#include "test_support.hpp"

namespace {

using hpt::GruReset;
using Vec = std::vector<double>;

using hpt::test::download_flat;

template <class Real, class Mem>
hpt::View1<Real, Mem> device_vector(const Vec& x) {
  hpt::View1<Real, Mem> v("x", x.size());
  hpt::test::upload_values(v, x);
  return v;
}

// A synthetic training run: L_t = 0.5 + 2 exp(-t / 200) with 0.1 % multiplicative noise, and
// features that a forecaster can use (log loss, its last change, progress, a constant).
struct SyntheticRun {
  int features;
  std::mt19937 gen{2024};
  std::normal_distribution<double> noise{0.0, 1e-3};
  double previous_log = 0;

  double loss(int t) { return (0.5 + 2.0 * std::exp(-t / 200.0)) * (1.0 + noise(gen)); }
  Vec features_of(int t, double loss_t) {
    Vec x(std::size_t(features), 0.0);
    const double l = std::log(loss_t);
    x[0] = l;
    x[1] = t == 0 ? 0.0 : 100.0 * (l - previous_log);
    x[2] = t / 1000.0;
    x[3] = 1.0;
    previous_log = l;
    return x;
  }
};

template <class Space, class Real>
void observe_run(hpt::RssmOnline<Space, Real>& online, SyntheticRun& run, int from, int count,
                 bool train, std::vector<double>* reported = nullptr) {
  using Mem = typename Space::memory_space;
  for (int t = from; t < from + count; ++t) {
    const double l = run.loss(t);
    online.observe(device_vector<Real, Mem>(run.features_of(t, l)), l);
    if (!train) continue;
    const auto report = online.train_step();
    if (reported) reported->push_back(report.loss);
  }
}

template <class C>
class RssmOnlineTest : public ::testing::Test {};
TYPED_TEST_SUITE(RssmOnlineTest, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// ---- ring and window

TYPED_TEST(RssmOnlineTest, WindowHoldsTheLastStepsInOrder) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 2, H = 3, S = 2, I = 4, K = 3;
  hpt::RssmRing<Real, Mem> ring(K + 1, E, H, I);
  hpt::RssmWindow<Real, Mem> window(E, H, S, I, K);
  std::vector<Vec> xs, hs;
  Vec logs;
  const int observed = 9;  // wraps the ring twice
  for (int t = 0; t < observed; ++t) {
    Vec x(static_cast<std::size_t>(I)), h(static_cast<std::size_t>(E * H));
    for (int k = 0; k < I; ++k) x[std::size_t(k)] = 10 * t + k;
    for (int k = 0; k < E * H; ++k) h[std::size_t(k)] = -100 * t - k;
    hpt::View2<Real, Mem> latents("latents", E, H);
    hpt::test::upload_values(hpt::View1<Real, Mem>(latents.data(), E * H), h);
    hpt::rssm_ring_push(Space(), ring, t, device_vector<Real, Mem>(x), 0.25 * t * t, latents);
    xs.push_back(x);
    hs.push_back(h);
    logs.push_back(0.25 * t * t);
  }
  for (const bool bagging : {true, false}) {
    const int first = observed - 1 - K;
    hpt::rssm_gather_window(Space(), ring, first, K, 77, bagging, window);
    EXPECT_EQ(window.steps, K);
    const Vec x = download_flat(window.x), y = download_flat(window.y);
    const Vec h0 = download_flat(window.h0), w = download_flat(window.weight);
    const Vec eps = download_flat(window.eps);
    for (int t = 0; t < K; ++t) {
      for (int k = 0; k < I; ++k)
        EXPECT_EQ(x[std::size_t(t * I + k)], xs[std::size_t(first + t)][std::size_t(k)]);
      EXPECT_EQ(y[std::size_t(t)], double(Real(logs[std::size_t(first + t + 1)]) -
                                          Real(logs[std::size_t(first + t)])));
      for (int m = 0; m < E; ++m) {
        const int want = bagging ? hpt::rssm_bagging_weight(77, m, first + t) : 1;
        EXPECT_EQ(w[std::size_t(m * K + t)], double(want));
        // The same counter-based draw; the device may contract its arithmetic into FMAs (CUDA),
        // so agreement is to a few units in the last place of Real, not bit for bit.
        for (int s = 0; s < S; ++s) {
          const double want = double(Real(hpt::rssm_prior_noise(77, m, first + t, s)));
          EXPECT_NEAR(eps[std::size_t((m * K + t) * S + s)], want,
                      8 * std::numeric_limits<Real>::epsilon() * std::max(1.0, std::fabs(want)));
        }
      }
    }
    for (int k = 0; k < E * H; ++k)
      EXPECT_EQ(h0[std::size_t(k)], hs[std::size_t(first)][std::size_t(k)]);
  }
}

TEST(RssmBagging, PoissonOneWeightsHaveMeanAndVarianceOne) {
  const int n = 20000;
  double sum = 0, sq = 0;
  for (int t = 0; t < n; ++t) {
    const double w = hpt::rssm_bagging_weight(5, t % 3, t);
    sum += w;
    sq += w * w;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  // Standard error of the mean is 1/sqrt(n) = 0.007: 0.03 is four of them.
  EXPECT_NEAR(mean, 1.0, 0.03);
  EXPECT_NEAR(var, 1.0, 0.06);
  EXPECT_EQ(hpt::rssm_bagging_weight(5, 1, 42), hpt::rssm_bagging_weight(5, 1, 42));
}

// ---- filtering: observe() advances every member's latent by the GRU of the real features

double sigmoid(double a) {
  return 1.0 / (1.0 + std::exp(-a));
}

// One GRU step of member m from the flat parameters (tensor order of RssmParams): nn.GRUCell
// (After) or the prototype (Before).
Vec host_gru(const Vec& th, int E, int H, int I, int m, GruReset reset, const Vec& x,
             const Vec& h) {
  const std::size_t rows = std::size_t(3 * H), first = std::size_t(m) * rows;
  const std::size_t w_hh = std::size_t(E) * rows * std::size_t(I);
  const std::size_t b_ih = w_hh + std::size_t(E) * rows * std::size_t(H),
                    b_hh = b_ih + std::size_t(E) * rows;
  auto wx = [&](int q) {
    double s = th[b_ih + first + std::size_t(q)];
    for (int k = 0; k < I; ++k)
      s += th[(first + std::size_t(q)) * std::size_t(I) + std::size_t(k)] * x[std::size_t(k)];
    return s;
  };
  auto uv = [&](int q, const Vec& v) {
    double s = th[b_hh + first + std::size_t(q)];
    for (int k = 0; k < H; ++k)
      s +=
          th[w_hh + (first + std::size_t(q)) * std::size_t(H) + std::size_t(k)] * v[std::size_t(k)];
    return s;
  };
  const std::size_t units = std::size_t(H);
  Vec r(units), rh(units), out(units);
  for (int j = 0; j < H; ++j) r[std::size_t(j)] = sigmoid(wx(j) + uv(j, h));
  for (int j = 0; j < H; ++j) rh[std::size_t(j)] = r[std::size_t(j)] * h[std::size_t(j)];
  for (int j = 0; j < H; ++j) {
    const std::size_t u = std::size_t(j);
    const double z = sigmoid(wx(H + j) + uv(H + j, h));
    if (reset == GruReset::After)
      out[u] = (1 - z) * std::tanh(wx(2 * H + j) + r[u] * uv(2 * H + j, h)) + z * h[u];
    else
      out[u] = (1 - z) * h[u] + z * std::tanh(wx(2 * H + j) + uv(2 * H + j, rh));
  }
  return out;
}

TYPED_TEST(RssmOnlineTest, ObserveFiltersLatentsWithTheGru) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 2, H = 4, S = 2, I = 3;
  for (const GruReset reset : {GruReset::After, GruReset::Before}) {
    hpt::RssmModel<Real, Mem> model(E, H, S, I);
    hpt::initialize_rssm_params(Space(), model.params, 9);
    hpt::RssmOnline<Space, Real> online(model, reset, hpt::RssmTrainOptions());
    const Vec theta = download_flat(model.store.values());
    Vec h(std::size_t(E * H), 0.0);
    for (int t = 0; t < 3; ++t) {
      const Vec x = {0.5 * t, -0.25, 1.0 - t};
      online.observe(device_vector<Real, Mem>(x), 1.0 + t);
      for (int m = 0; m < E; ++m) {
        const Vec row(h.begin() + m * H, h.begin() + (m + 1) * H);
        const Vec next = host_gru(theta, E, H, I, m, reset, x, row);
        std::copy(next.begin(), next.end(), h.begin() + m * H);
      }
      const Vec got = download_flat(model.latents);
      for (std::size_t k = 0; k < h.size(); ++k)
        EXPECT_TRUE(hpt::test::near_rel(got[k], h[k], hpt::test::tolerance<Real>(100)))
            << (reset == GruReset::After ? "after" : "before") << " step " << t << " unit " << k;
    }
    EXPECT_EQ(online.observed(), 3);
  }
}

// ---- learning: the windowed NLL drops on a smooth loss curve

TYPED_TEST(RssmOnlineTest, TrainingLowersTheWindowLoss) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 3, H = 16, S = 4, I = 8;
  for (const GruReset reset : {GruReset::After, GruReset::Before}) {
    hpt::RssmModel<Real, Mem> model(E, H, S, I);
    hpt::initialize_rssm_params(Space(), model.params, 4);
    hpt::RssmOnline<Space, Real> online(model, reset, hpt::RssmTrainOptions());
    SyntheticRun run{I};
    // The first full window, before any training, against the mean of the full windows after each
    // of the last 40 of 400 train steps. One late window's loss swings by up to 2.5 nats from one
    // step to the next (measured in double: -5.9 to -3.4 over those 40), so a single window tests
    // which step it lands on, and the trajectory moves with the gradients' rounding (their
    // summation order): the mean over 40 moved by 0.1 nats when that order did, 1.1 below start.
    const int first = online.options().bptt + 1;
    observe_run(online, run, 0, first, false);
    const double start = online.window_loss();
    std::vector<double> reported;
    observe_run(online, run, first, 360, true, &reported);
    double end = 0;
    for (int t = first + 360; t < first + 400; ++t) {
      observe_run(online, run, t, 1, true, &reported);
      end += online.window_loss() / 40;
    }
    const double last = online.window_loss();
    EXPECT_EQ(last, online.window_loss());  // evaluating does not change the state
    for (const double l : reported) ASSERT_TRUE(std::isfinite(l));
    // The untrained head forecasts sigma = 0.01 per step against 0.14 % noise: a learned variance
    // alone gains about log(0.01 / 0.0014) = 2 nats per sample, so half a nat is "clearly".
    EXPECT_LT(end, start - 0.5) << (reset == GruReset::After ? "after" : "before") << ": from "
                                << start << " to " << end;
  }
}

// ---- state: a copy of every listed buffer and counter continues bit for bit

template <class Space, class Real>
void copy_state(hpt::RssmOnline<Space, Real>& from, hpt::RssmOnline<Space, Real>& to) {
  const auto src = from.state_buffers();
  const auto dst = to.state_buffers();
  ASSERT_EQ(src.size(), dst.size());
  for (std::size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(src[i].name, dst[i].name);
    Kokkos::deep_copy(dst[i].view, src[i].view);
  }
  auto a = from.state_counters();
  auto b = to.state_counters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) b[i].set(a[i].get());
}

template <class Space, class Real>
bool same_bits(const hpt::RssmOnline<Space, Real>& a, const hpt::RssmOnline<Space, Real>& b,
               std::string* differing) {
  const auto x = a.state_buffers();
  const auto y = b.state_buffers();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Vec u = download_flat(x[i].view), v = download_flat(y[i].view);
    if (u.size() != v.size() || std::memcmp(u.data(), v.data(), u.size() * sizeof(double)) != 0) {
      *differing = x[i].name;
      return false;
    }
  }
  return true;
}

TYPED_TEST(RssmOnlineTest, RestoredStateContinuesBitIdentically) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 2, H = 8, S = 3, I = 5;
  hpt::RssmTrainOptions options;
  options.bptt = 6;
  hpt::RssmModel<Real, Mem> model_a(E, H, S, I), model_b(E, H, S, I);
  hpt::initialize_rssm_params(Space(), model_a.params, 1);
  hpt::initialize_rssm_params(Space(), model_b.params, 2);  // overwritten by the copy
  hpt::RssmOnline<Space, Real> a(model_a, GruReset::After, options);
  hpt::RssmOnline<Space, Real> b(model_b, GruReset::After, options);
  SyntheticRun run_a{I}, run_b{I};
  observe_run(a, run_a, 0, 20, true);
  observe_run(b, run_b, 0, 3, true);  // b's own history differs from a's
  copy_state(a, b);
  run_b = run_a;
  std::string differing;
  ASSERT_TRUE(same_bits(a, b, &differing)) << differing;

  std::vector<double> loss_a, loss_b;
  observe_run(a, run_a, 20, 15, true, &loss_a);
  observe_run(b, run_b, 20, 15, true, &loss_b);
  EXPECT_EQ(a.observed(), b.observed());
  EXPECT_EQ(a.state_counters()[1].get(), b.state_counters()[1].get());
  EXPECT_TRUE(same_bits(a, b, &differing)) << differing;
  for (std::size_t i = 0; i < loss_a.size(); ++i) EXPECT_EQ(loss_a[i], loss_b[i]) << i;
}

TYPED_TEST(RssmOnlineTest, StateListsEveryBufferOnce) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::RssmModel<Real, Mem> model(2, 4, 2, 3);
  hpt::RssmOnline<Space, Real> online(model, GruReset::Before, hpt::RssmTrainOptions());
  std::vector<std::string> names;
  for (const auto& b : online.state_buffers()) names.push_back(b.name);
  const std::vector<std::string> want = {
      "parameters", "optimizer/m",   "optimizer/v",   "optimizer/prev_update",
      "latents",    "ring/features", "ring/log_loss", "ring/latents"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(online.state_buffers()[0].view.data(), model.store.values().data());
  EXPECT_EQ(online.state_counters().size(), 2u);
}

// ---- deck options and the dynamics style

TEST(RssmOnlineOptions, DeclaredWithDefaultsAndRanges) {
  hpt::OptionSchema schema;
  hpt::declare_dynamics_options(schema);
  hpt::Config config(schema);
  const auto o = hpt::rssm_train_options_from_config(config);
  EXPECT_EQ(o.bptt, 16);
  EXPECT_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.kl_weight, 1e-3);
  EXPECT_EQ(o.clip_norm, 5.0);
  EXPECT_THROW(config.set("dynamics.bptt", "0", "test"), hpt::InputError);
  EXPECT_THROW(config.set("dynamics.lr", "-1", "test"), hpt::InputError);
  config.set("dynamics.bptt", "4", "test");
  config.set("dynamics.members", "2", "test");
  config.set("dynamics.hidden", "6", "test");
  config.set("dynamics.stochastic", "2", "test");
  hpt::RssmDynamics dyn(config);
  EXPECT_EQ(dyn.online().options().bptt, 4);
  EXPECT_EQ(&dyn.online(), &dyn.online());
}

}  // namespace
