#pragma once
// Shared by the rollout-kernel tests: a random RSSM problem whose paths stay O(1), outputs poisoned
// with NaN before a kernel runs (so an unwritten element cannot pass), and their download.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/ensemble_rollout.hpp"
#include "test_support.hpp"

namespace hpt::test {

template <class View>
void fill_random(const View& v, std::mt19937& gen, double lo, double hi) {
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

// "E=.. N=.. H=.. I=.. S=.. Y=.. reset=.." of a kernel-comparison case, for SCOPED_TRACE.
template <class Case>
std::string case_label(const Case& c) {
  std::ostringstream m;
  m << "E=" << c.E << " N=" << c.N << " H=" << c.H << " I=" << c.I << " S=" << c.S << " Y=" << c.Y
    << " reset=" << int(c.reset);
  return m.str();
}

// The settings a kernel-comparison case runs with (features clamped at 3 so that paths stay
// bounded).
inline hpt::RolloutSettings case_settings(int horizon, int scenarios, std::uint64_t seed,
                                          hpt::FeatureUpdate mode) {
  hpt::RolloutSettings settings;
  settings.horizon = horizon;
  settings.scenarios = scenarios;
  settings.seed = seed;
  settings.feature_update = mode;
  settings.clamp = 3.0;
  return settings;
}

// A random RSSM and start state like test_rollout.cpp's, heads scaled with H so paths stay O(1).
template <class Real, class Mem>
struct Problem {
  hpt::RssmParams<Real, Mem> params;
  hpt::View2<Real, Mem> h0;
  hpt::RolloutInputs<Real, Mem> in;

  Problem(int E, int H, int S, int I, std::mt19937& gen) : params(E, H, S, I), h0("h0", E, H) {
    const double g = 1.0 / std::sqrt(double(H));
    fill_random(params.gru.w_ih, gen, -g, g);
    fill_random(params.gru.w_hh, gen, -g, g);
    fill_random(params.gru.b_ih, gen, -g, g);
    fill_random(params.gru.b_hh, gen, -g, g);
    fill_random(params.prior_mean_w, gen, -1.6 * g, 1.6 * g);
    fill_random(params.prior_mean_b, gen, -0.2, 0.2);
    fill_random(params.prior_scale_w, gen, -1.6 * g, 1.6 * g);
    fill_random(params.prior_scale_b, gen, -1.0, 0.0);
    const double c = 0.4 / std::sqrt(double(H + S));  // keeps the loss paths O(1)
    fill_random(params.loss_head_w, gen, -c, c);
    auto d = Kokkos::create_mirror_view(params.loss_head_b);
    for (int m = 0; m < E; ++m) {  // mean change slightly negative, std of the change about 0.1
      d(m, 0) = Real(-0.02 - 0.01 * m);
      d(m, 1) = Real(-4.5 + 0.25 * m);
    }
    Kokkos::deep_copy(params.loss_head_b, d);
    fill_random(h0, gen, -0.8, 0.8);
    in.x0 = hpt::View1<Real, Mem>("x0", I);
    in.norm_mean = hpt::View1<Real, Mem>("mean", I);
    in.norm_inv_std = hpt::View1<Real, Mem>("inv_std", I);
    fill_random(in.x0, gen, -2.0, 2.0);
    fill_random(in.norm_mean, gen, -0.3, 0.3);
    fill_random(in.norm_inv_std, gen, 0.5, 3.0);
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

// Runs `kernel(out)` into outputs of the settings' sizes poisoned with NaN, then fences.
template <class Space, class Real, class Mem, class Kernel>
hpt::RolloutOutputs<Real, Mem> run_rollout(const Problem<Real, Mem>& pb,
                                           const hpt::RolloutSettings& settings,
                                           const Kernel& kernel) {
  hpt::RolloutOutputs<Real, Mem> out(settings.scenarios, pb.params.members(), pb.params.hidden(),
                                     settings.horizon);
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  Kokkos::deep_copy(out.loss_paths, nan);
  Kokkos::deep_copy(out.final_latents, nan);
  Kokkos::deep_copy(out.hidden_norms, nan);
  Kokkos::deep_copy(out.mean_hidden_norm, nan);
  kernel(out);
  Space().fence();
  return out;
}

template <class Out>
std::vector<std::vector<double>> all_outputs(const Out& out) {
  return {download(out.loss_paths), download(out.final_latents), download(out.hidden_norms),
          download(out.mean_hidden_norm)};
}

const char* const kOutputNames[] = {"loss_paths", "final_latents", "hidden_norms",
                                    "mean_hidden_norm"};

// One kernel-comparison case: sizes, steps, feature update and GRU reset.
struct RolloutCase {
  int E, N, H, I, S, Y;
  hpt::FeatureUpdate mode;
  hpt::GruReset reset;
};

// The four outputs of the team-per-path ensemble_rollout (the reference the other kernels are
// compared with; itself checked against a plain host loop in test_rollout.cpp).
template <class Space, class Real, class Mem>
std::vector<std::vector<double>> team_per_path_outputs(const Problem<Real, Mem>& pb,
                                                       hpt::GruReset reset,
                                                       const hpt::RolloutSettings& settings) {
  return all_outputs(
      run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        hpt::ensemble_rollout(Space(), pb.params, reset, pb.h0, pb.in, settings, out);
      }));
}

// Every element of the four outputs within near_rel(tol) of the reference's (at most 5 reported per
// output).
inline void expect_outputs_near(const std::vector<std::vector<double>>& got,
                                const std::vector<std::vector<double>>& ref, double tol) {
  for (int o = 0; o < 4; ++o) {
    ASSERT_EQ(got[o].size(), ref[o].size()) << kOutputNames[o];
    int bad = 0;
    for (std::size_t i = 0; i < ref[o].size() && bad < 5; ++i) {
      const auto ok = near_rel(got[o][i], ref[o][i], tol);
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << kOutputNames[o] << " element " << i;
    }
  }
}

}  // namespace hpt::test
