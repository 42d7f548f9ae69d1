// The persistent rollout (kernels/ensemble_rollout_persistent.hpp) against the team-per-path
// ensemble_rollout (itself checked against a host reference in test_rollout.cpp) on the same draws,
// and the dispatcher: where the persistent kernel is supported (CUDA, small enough) it must agree
// with ensemble_rollout within the precision's tolerance and be bit-reproducible; elsewhere
// ensemble_rollout_auto must fall back and give bit-identical results.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_persistent.hpp"
#include "test_support.hpp"

namespace {

using hpt::FeatureUpdate;
using hpt::GruReset;

template <class View>
void fill_uniform(const View& v, std::mt19937& gen, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  auto mirror = Kokkos::create_mirror_view(v);
  using T = typename View::non_const_value_type;
  for (std::size_t i = 0; i < mirror.span(); ++i) mirror.data()[i] = T(dist(gen));
  Kokkos::deep_copy(v, mirror);
}

template <class View>
std::vector<double> download(const View& v) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(mirror.span());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = double(mirror.data()[i]);
  return out;
}

// A random RSSM and start state like test_rollout.cpp's, heads scaled with H so paths stay O(1).
template <class Real, class Mem>
struct Problem {
  hpt::RssmParams<Real, Mem> params;
  hpt::View2<Real, Mem> h0;
  hpt::RolloutInputs<Real, Mem> in;

  Problem(int E, int H, int S, int I, std::mt19937& gen) : params(E, H, S, I), h0("h0", E, H) {
    const double g = 1.0 / std::sqrt(double(H));
    fill_uniform(params.gru.w_ih, gen, -g, g);
    fill_uniform(params.gru.w_hh, gen, -g, g);
    fill_uniform(params.gru.b_ih, gen, -g, g);
    fill_uniform(params.gru.b_hh, gen, -g, g);
    fill_uniform(params.prior_mean_w, gen, -1.6 * g, 1.6 * g);
    fill_uniform(params.prior_mean_b, gen, -0.2, 0.2);
    fill_uniform(params.prior_scale_w, gen, -1.6 * g, 1.6 * g);
    fill_uniform(params.prior_scale_b, gen, -1.0, 0.0);
    const double c = 0.4 / std::sqrt(double(H + S));  // keeps the loss paths O(1)
    fill_uniform(params.loss_head_w, gen, -c, c);
    auto d = Kokkos::create_mirror_view(params.loss_head_b);
    for (int m = 0; m < E; ++m) {  // mean change slightly negative, std of the change about 0.1
      d(m, 0) = Real(-0.02 - 0.01 * m);
      d(m, 1) = Real(-4.5 + 0.25 * m);
    }
    Kokkos::deep_copy(params.loss_head_b, d);
    fill_uniform(h0, gen, -0.8, 0.8);
    in.x0 = hpt::View1<Real, Mem>("x0", I);
    in.norm_mean = hpt::View1<Real, Mem>("mean", I);
    in.norm_inv_std = hpt::View1<Real, Mem>("inv_std", I);
    fill_uniform(in.x0, gen, -2.0, 2.0);
    fill_uniform(in.norm_mean, gen, -0.3, 0.3);
    fill_uniform(in.norm_inv_std, gen, 0.5, 3.0);
    in.loss_states = hpt::View1<hpt::LossState<Real>, Mem>("loss_states", 2);
    in.run = 1;
    auto states = Kokkos::create_mirror_view(in.loss_states);
    const Real l = Real(std::log(0.9));
    hpt::LossState<Real> ls{};
    ls.log_loss = l;
    ls.ema4 = l + Real(0.03);
    ls.ema16 = l + Real(0.11);
    ls.ema64 = l + Real(0.35);
    ls.best = l - Real(0.02);
    ls.first = l + Real(1.3);
    ls.mean32 = l + Real(0.07);
    ls.std32 = Real(0.05);
    for (int i = 0; i < hpt::kLossWindow; ++i)
      ls.window[i] = l + Real(0.013 * (hpt::kLossWindow - 1 - i) + (i % 2 ? 0.004 : -0.003));
    ls.window[hpt::kLossWindow - 1] = l;
    ls.count = hpt::kLossWindow;
    states(0) = ls;
    states(0).log_loss = Real(7);  // another run: the rollout must read run 1
    states(1) = ls;
    Kokkos::deep_copy(in.loss_states, states);
  }
};

enum class Kernel { Existing, Persistent, Auto };

// Runs one kernel into outputs poisoned with NaN, so an unwritten element cannot pass.
template <class Space, class Real, class Mem>
hpt::RolloutOutputs<Real, Mem> run(Kernel kernel, const Problem<Real, Mem>& pb, GruReset reset,
                                   const hpt::RolloutSettings& settings) {
  hpt::RolloutOutputs<Real, Mem> out(settings.scenarios, pb.params.members(), pb.params.hidden(),
                                     settings.horizon);
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  Kokkos::deep_copy(out.loss_paths, nan);
  Kokkos::deep_copy(out.final_latents, nan);
  Kokkos::deep_copy(out.hidden_norms, nan);
  Kokkos::deep_copy(out.mean_hidden_norm, nan);
  const Space space;
  if (kernel == Kernel::Existing)
    hpt::ensemble_rollout(space, pb.params, reset, pb.h0, pb.in, settings, out);
  else if (kernel == Kernel::Persistent)
    hpt::ensemble_rollout_persistent(space, pb.params, reset, pb.h0, pb.in, settings, out);
  else
    hpt::ensemble_rollout_auto(space, pb.params, reset, pb.h0, pb.in, settings, out);
  space.fence();
  return out;
}

template <class Out>
std::vector<std::vector<double>> all_outputs(const Out& out) {
  return {download(out.loss_paths), download(out.final_latents), download(out.hidden_norms),
          download(out.mean_hidden_norm)};
}

const char* const kOutputNames[] = {"loss_paths", "final_latents", "hidden_norms",
                                    "mean_hidden_norm"};

struct Case {
  int E, N, H, I, S, Y;
  FeatureUpdate mode;
  GruReset reset;
  bool fits_any_gpu;  // few paths and small H: supported on every CUDA GPU
  bool fits_no_gpu;   // more paths than any GPU has multiprocessors / 2
};

const std::vector<Case> kCases = {
    {2, 3, 32, 64, 4, 20, FeatureUpdate::Rich, GruReset::After, true, false},
    {2, 2, 40, 5, 6, 15, FeatureUpdate::LossOnly, GruReset::Before, true, false},
    // 100 units over teams of 3: the last team holds a single unit.
    {3, 1, 100, 64, 8, 12, FeatureUpdate::Rich, GruReset::Before, true, false},
    // The `small` bench size (fits in float on an H200, not in double).
    {5, 1, 256, 64, 32, 10, FeatureUpdate::Rich, GruReset::After, false, false},
    {4, 100, 16, 64, 4, 6, FeatureUpdate::Rich, GruReset::After, false, true},
};

template <class T>
class RolloutPersistent : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutPersistent, hpt::test::BackendsAndPrecisions);

TYPED_TEST(RolloutPersistent, DispatcherMatchesExistingKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
#if defined(KOKKOS_ENABLE_CUDA)
  constexpr bool gpu = std::is_same<Space, Kokkos::Cuda>::value;
#else
  constexpr bool gpu = false;
#endif
  std::mt19937 gen(314);
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "E=" << c.E << " N=" << c.N << " H=" << c.H << " I=" << c.I
                                      << " S=" << c.S << " Y=" << c.Y << " reset=" << int(c.reset));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    hpt::RolloutSettings settings;
    settings.horizon = c.Y;
    settings.scenarios = c.N;
    settings.seed = 1000 + c.H;
    settings.feature_update = c.mode;
    settings.clamp = 3.0;
    const bool supported = hpt::persistent_rollout_supported<Space, Real>(c.E, c.N, c.H, c.I, c.S);
    if (!gpu || c.fits_no_gpu) {
      EXPECT_FALSE(supported);
    }
    if (gpu && c.fits_any_gpu) {
      EXPECT_TRUE(supported);
    }

    const auto existing = all_outputs(run<Space>(Kernel::Existing, pb, c.reset, settings));
    const auto chosen = all_outputs(run<Space>(Kernel::Auto, pb, c.reset, settings));
    if (!supported) {
      for (int o = 0; o < 4; ++o) EXPECT_EQ(chosen[o], existing[o]) << kOutputNames[o];
      continue;
    }
    const auto persistent = all_outputs(run<Space>(Kernel::Persistent, pb, c.reset, settings));
    // Same kernel twice: bit-identical (a race between teams would show here).
    for (int o = 0; o < 4; ++o) EXPECT_EQ(chosen[o], persistent[o]) << kOutputNames[o];
    // Against the existing kernel: only the summation order differs; errors compound per step.
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I);
    for (int o = 0; o < 4; ++o) {
      ASSERT_EQ(persistent[o].size(), existing[o].size());
      int bad = 0;
      for (std::size_t i = 0; i < existing[o].size() && bad < 5; ++i) {
        const auto ok = hpt::test::near_rel(persistent[o][i], existing[o][i], tol);
        if (!ok) ++bad;
        EXPECT_TRUE(ok) << kOutputNames[o] << " element " << i;
      }
    }
  }
}

// Horizon 0: the current loss and h0 come back unchanged from whichever kernel the dispatcher
// picks.
TYPED_TEST(RolloutPersistent, ZeroHorizon) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(8);
  const Problem<Real, Mem> pb(2, 24, 4, 64, gen);
  hpt::RolloutSettings settings;
  settings.horizon = 0;
  settings.scenarios = 2;
  const auto out = all_outputs(run<Space>(Kernel::Auto, pb, GruReset::After, settings));
  const auto h0 = download(pb.h0);
  const auto state = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.in.loss_states);
  for (const double L : out[0]) EXPECT_EQ(L, double(Real(std::exp(state(1).log_loss))));
  ASSERT_EQ(out[1].size(), 2 * h0.size());
  for (std::size_t i = 0; i < out[1].size(); ++i) EXPECT_EQ(out[1][i], h0[i % h0.size()]);
}

// Called directly where it is not supported, the persistent kernel refuses instead of hanging.
TYPED_TEST(RolloutPersistent, RefusesUnsupportedSizes) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(9);
  const int E = 4, N = 100, H = 16, S = 4, I = 64;
  ASSERT_FALSE((hpt::persistent_rollout_supported<Space, Real>(E, N, H, I, S)));
  const Problem<Real, Mem> pb(E, H, S, I, gen);
  hpt::RolloutSettings settings;
  settings.horizon = 3;
  settings.scenarios = N;
  hpt::RolloutOutputs<Real, Mem> out(N, E, H, settings.horizon);
  EXPECT_THROW(hpt::ensemble_rollout_persistent(Space(), pb.params, GruReset::After, pb.h0, pb.in,
                                                settings, out),
               hpt::InternalError);
}

}  // namespace
