#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) as one kernel launch for the whole
// horizon: one team per (scenario, member) loops over the Y steps with team barriers, keeping h, x,
// s and the path's loss state in team scratch. Random draws are counter-based (core/rng.hpp), keyed
// by (seed, scenario, member, step, index), so a rollout is identical on every backend and thread
// count.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rich_features.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

struct RolloutSettings {
  int horizon = 0;    // Y steps
  int scenarios = 1;  // N independent samples of the stochastic path per member
  std::uint64_t seed = 1;
  FeatureUpdate feature_update = FeatureUpdate::Rich;
  double clamp = 10.0;  // bound of a re-normalised [R] feature (encoder.clamp)
  int team_size = 0;    // threads per team; 0 lets Kokkos choose (results do not depend on it)
};

// Where the rollout starts (besides the latents h0): the encoder's state of one run.
template <class Real, class Mem = MemSpace>
struct RolloutInputs {
  View1<Real, Mem> x0;                      // (I) normalised features at t, as encoded
  View1<LossState<Real>, Mem> loss_states;  // per run (extract_loss_state); element `run` is used
  int run = 0;
  View1<Real, Mem> norm_mean;     // (I) normaliser mean, for re-normalising [R] features (Rich)
  View1<Real, Mem> norm_inv_std;  // (I) normaliser 1/std (Rich)
};

// Results of a rollout, allocated once by the caller.
template <class Real, class Mem = MemSpace>
struct RolloutOutputs {
  View3<Real, Mem> loss_paths;        // (N, E, Y+1) loss L = exp(l); entry 0 is the current loss
  View3<Real, Mem> final_latents;     // (N, E, H) h after the last step
  View3<Real, Mem> hidden_norms;      // (N, E, Y) ||h||_2 after step k+1, per path
  View1<Real, Mem> mean_hidden_norm;  // (Y) hidden_norms averaged over the N*E paths

  RolloutOutputs() = default;
  RolloutOutputs(int scenarios, int members, int hidden, int horizon)
      : loss_paths("rollout.loss_paths", scenarios, members, horizon + 1),
        final_latents("rollout.final_latents", scenarios, members, hidden),
        hidden_norms("rollout.hidden_norms", scenarios, members, horizon),
        mean_hidden_norm("rollout.mean_hidden_norm", horizon) {}
};

// FLOPs of one rollout member-step (docs/bench.md#flop-counts): the GRU plus the prior heads (A, B)
// and the loss head.
inline double rollout_flops_per_member_step(int hidden, int input, int stochastic) {
  const double H = hidden, S = stochastic;
  return gru_step_flops(hidden, input) + 4.0 * S * H + 4.0 * (H + S);
}

namespace detail {

// Least-squares slope per step of the newest min(count, kLossWindow) entries of the window.
template <class Real>
KOKKOS_INLINE_FUNCTION Real window_slope(const LossState<Real>& st) {
  const int n = st.count < kLossWindow ? st.count : kLossWindow;
  if (n < 2) return Real(0);
  const Real* y = st.window + (kLossWindow - n);
  Real mean = 0;
  for (int i = 0; i < n; ++i) mean += y[i];
  mean /= Real(n);
  const Real centre = Real(n - 1) / Real(2);
  Real sxy = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    const Real dx = Real(i) - centre;
    sxy += dx * (y[i] - mean);
    sxx += dx * dx;
  }
  return sxy / sxx;
}

// s_i = mu_s + sigma_s * eps from the prior sums A_i h and B_i h of member m
// (docs/method.md#rssm-ensemble).
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION Real prior_sample(const RssmParams<Real, Mem>& p, const int m, const int i,
                                         const Real ah, const Real bh, const Real eps) {
  const Real mu = ah + p.prior_mean_b(m, i);
  const Real sigma = math::softplus(bh + p.prior_scale_b(m, i)) + Real(kPriorScaleFloor);
  return mu + sigma * eps;
}

// delta = mu_delta + exp(log var_delta / 2) * eps from the loss head sums C_0 [h; s] and
// C_1 [h; s] of member m (docs/method.md#rssm-ensemble; log var clamped to +-kLogVarLimit).
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION Real loss_delta(const RssmParams<Real, Mem>& p, const int m, const Real c0,
                                       const Real c1, const Real eps) {
  const Real mu = c0 + p.loss_head_b(m, 0);
  const Real log_var =
      math::clamp(c1 + p.loss_head_b(m, 1), Real(-kLogVarLimit), Real(kLogVarLimit));
  return mu + math::exp(Real(0.5) * log_var) * eps;
}

// l <- l + delta, continue the path's loss statistics, and write the features that evolve into x:
// LossOnly sets x[0] to the raw loss; Rich recomputes every [R] feature of rich_features.hpp and
// re-normalises it with the normaliser's fixed mean and 1/std.
template <class Real, class VecX, class VecStat>
KOKKOS_INLINE_FUNCTION void advance_loss_features(LossState<Real>& st, const Real delta,
                                                  const FeatureUpdate mode, const VecX& x,
                                                  const VecStat& mean, const VecStat& inv_std,
                                                  const Real clamp) {
  st.log_loss += delta;
  const Real l = st.log_loss;
  st.ema4 += (l - st.ema4) / Real(4);
  st.ema16 += (l - st.ema16) / Real(16);
  st.ema64 += (l - st.ema64) / Real(64);
  st.best = math::min(st.best, l);
  for (int i = 0; i + 1 < kLossWindow; ++i) st.window[i] = st.window[i + 1];
  st.window[kLossWindow - 1] = l;
  if (st.count < kLossWindow) ++st.count;

  if (mode == FeatureUpdate::LossOnly) {
    x(0) = math::exp(l);
    return;
  }
  auto put = [&](const int index, const Real raw) {
    x(index) = math::clamp((raw - mean(index)) * inv_std(index), -clamp, clamp);
  };
  put(rich::kLogLoss, l);
  put(rich::kLossSlope8, window_slope(st));
  put(rich::kLossEmaGap4, l - st.ema4);
  put(rich::kLossEmaGap16, l - st.ema16);
  put(rich::kLossEmaGap64, l - st.ema64);
  put(rich::kLossBestGap, l - st.best);
  put(rich::kLossLastDelta, delta);
  put(rich::kLossZ32, (l - st.mean32) / (st.std32 + Real(1e-8)));
  put(rich::kLossProgress, st.first - l);
}

// The argument checks every rollout kernel shares (`who` names the kernel in the message).
template <class Real, class Mem>
void check_rollout_arguments(const RssmParams<Real, Mem>& params, const View2<Real, Mem>& h0,
                             const RolloutInputs<Real, Mem>& in, const RolloutSettings& settings,
                             const RolloutOutputs<Real, Mem>& out, const char* who) {
  const int E = params.members();
  const int H = params.hidden();
  const int I = params.input();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const FeatureUpdate mode = settings.feature_update;
  HPT_REQUIRE(Y >= 0 && N >= 1, std::string(who) + ": needs horizon >= 0 and scenarios >= 1");
  HPT_REQUIRE(int(h0.extent(0)) == E && int(h0.extent(1)) == H,
              std::string(who) + ": h0 must be (E, H)");
  HPT_REQUIRE(int(in.x0.extent(0)) == I, std::string(who) + ": x0 must have the GRU's input size");
  HPT_REQUIRE(in.run >= 0 && in.run < int(in.loss_states.extent(0)),
              std::string(who) + ": loss state index out of range");
  HPT_REQUIRE(settings.clamp > 0, std::string(who) + ": clamp must be positive");
  if (mode == FeatureUpdate::Rich) {
    HPT_REQUIRE(I >= rich::kCount,
                std::string(who) + ": Rich feature update needs the 64 rich features");
    HPT_REQUIRE(int(in.norm_mean.extent(0)) == I && int(in.norm_inv_std.extent(0)) == I,
                std::string(who) + ": normaliser mean and 1/std must have size I");
  } else {
    HPT_REQUIRE(I >= 1, std::string(who) + ": LossOnly feature update needs I >= 1");
  }
  HPT_REQUIRE(int(out.loss_paths.extent(0)) == N && int(out.loss_paths.extent(1)) == E &&
                  int(out.loss_paths.extent(2)) == Y + 1,
              std::string(who) + ": loss_paths must be (N, E, Y+1)");
  HPT_REQUIRE(int(out.final_latents.extent(0)) == N && int(out.final_latents.extent(1)) == E &&
                  int(out.final_latents.extent(2)) == H,
              std::string(who) + ": final_latents must be (N, E, H)");
  HPT_REQUIRE(int(out.hidden_norms.extent(0)) == N && int(out.hidden_norms.extent(1)) == E &&
                  int(out.hidden_norms.extent(2)) == Y && int(out.mean_hidden_norm.extent(0)) == Y,
              std::string(who) + ": hidden_norms must be (N, E, Y) and mean_hidden_norm (Y)");
}

// mean_hidden_norm(k) = hidden_norms(:, :, k) averaged over the N*E paths, summed in a fixed order
// (no thread-count dependence).
template <class Space, class Real>
HPT_LAUNCHER void mean_hidden_norm(const Space& space,
                                   const RolloutOutputs<Real, typename Space::memory_space>& out) {
  const auto hidden_norms = out.hidden_norms;
  const auto mean_norm = out.mean_hidden_norm;
  const int N = int(hidden_norms.extent(0));
  const int E = int(hidden_norms.extent(1));
  const double paths_count = double(N) * double(E);
  Kokkos::parallel_for(
      "hpt::rollout_hidden_norm", Kokkos::RangePolicy<Space>(space, 0, int(mean_norm.extent(0))),
      KOKKOS_LAMBDA(const int k) {
        double sum = 0;
        for (int n = 0; n < N; ++n)
          for (int m = 0; m < E; ++m) sum += double(hidden_norms(n, m, k));
        mean_norm(k) = Real(sum / paths_count);
      });
}

}  // namespace detail

// Runs the rollout of docs/method.md#ensemble-rollout for every (scenario, member): for k = 1..Y, h
// <- GRU_m(h, x); s = mu_s + sigma_s * eps (eps index < S); delta = mu_delta + exp(log var_delta /
// 2) * eps' (index S); l <- l + delta; update x from the path (settings.feature_update). h0 is (E,
// H).
template <class Space, class Real>
HPT_LAUNCHER void ensemble_rollout(const Space& space,
                                   const RssmParams<Real, typename Space::memory_space>& params,
                                   const GruReset reset,
                                   const View2<Real, typename Space::memory_space>& h0,
                                   const RolloutInputs<Real, typename Space::memory_space>& in,
                                   const RolloutSettings& settings,
                                   const RolloutOutputs<Real, typename Space::memory_space>& out) {
  const int E = params.members();
  const int H = params.hidden();
  const int S = params.stochastic();
  const int I = params.input();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const FeatureUpdate mode = settings.feature_update;
  detail::check_rollout_arguments(params, h0, in, settings, out, "ensemble_rollout");
  if (E == 0) return;

  using Policy = Kokkos::TeamPolicy<Space>;
  using Scratch = detail::ScratchView1<Space, Real>;
  using StateScratch = detail::ScratchView1<Space, LossState<Real>>;
  const std::size_t bytes = StateScratch::shmem_size(1) + 3 * Scratch::shmem_size(H) +
                            Scratch::shmem_size(I) + Scratch::shmem_size(S);
  const int level = detail::scratch_level_for<Space>(bytes);

  const RssmParams<Real, typename Space::memory_space> p = params;
  const std::uint64_t seed = settings.seed;
  const Real clamp = Real(settings.clamp);

  const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    const int n = team.league_rank() / E;
    const int m = team.league_rank() % E;
    StateScratch state(team.team_scratch(level), 1);
    Scratch h_a(team.team_scratch(level), H);
    Scratch h_b(team.team_scratch(level), H);
    Scratch work(team.team_scratch(level), H);
    Scratch x(team.team_scratch(level), I);
    Scratch s(team.team_scratch(level), S);

    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H), [&](const int j) { h_a(j) = h0(m, j); });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, I), [&](const int k) { x(k) = in.x0(k); });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      state(0) = in.loss_states(in.run);
      out.loss_paths(n, m, 0) = math::exp(state(0).log_loss);
    });
    team.team_barrier();

    for (int k = 1; k <= Y; ++k) {
      const Scratch h_old = (k % 2 == 1) ? h_a : h_b;
      const Scratch h = (k % 2 == 1) ? h_b : h_a;
      detail::gru_cell_team(team, p.gru, m, reset, x, h_old, work, h, 0, H);
      team.team_barrier();

      // Prior over s from the new h, and one sample per unit.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, S), [&](const int i) {
        detail::Sum3<Real> acc;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, H),
            [&](const int j, detail::Sum3<Real>& a) {
              a.a += p.prior_mean_w(m, i, j) * h(j);
              a.b += p.prior_scale_w(m, i, j) * h(j);
            },
            acc);
        const Real eps = Real(rng::normal(rng::key(seed, n, m, k, i)));
        const Real si = detail::prior_sample(p, m, i, acc.a, acc.b, eps);
        Kokkos::single(Kokkos::PerThread(team), [&]() { s(i) = si; });
      });
      team.team_barrier();

      // Loss head on [h; s], the hidden norm and the path update: one team thread, fixed order.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](const int) {
        detail::Sum3<Real> ah;  // C_0 h, C_1 h, |h|^2
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, H),
            [&](const int j, detail::Sum3<Real>& a) {
              const Real hj = h(j);
              a.a += p.loss_head_w(m, 0, j) * hj;
              a.b += p.loss_head_w(m, 1, j) * hj;
              a.c += hj * hj;
            },
            ah);
        detail::Sum3<Real> as;  // C_0 s, C_1 s
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, S),
            [&](const int i, detail::Sum3<Real>& a) {
              a.a += p.loss_head_w(m, 0, H + i) * s(i);
              a.b += p.loss_head_w(m, 1, H + i) * s(i);
            },
            as);
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          const Real eps = Real(rng::normal(rng::key(seed, n, m, k, S)));
          const Real delta = detail::loss_delta(p, m, ah.a + as.a, ah.b + as.b, eps);
          detail::advance_loss_features(state(0), delta, mode, x, in.norm_mean, in.norm_inv_std,
                                        clamp);
          out.loss_paths(n, m, k) = math::exp(state(0).log_loss);
          out.hidden_norms(n, m, k - 1) = math::sqrt(ah.c);
        });
      });
      team.team_barrier();
    }

    const Scratch h_last = (Y % 2 == 1) ? h_b : h_a;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H),
                         [&](const int j) { out.final_latents(n, m, j) = h_last(j); });
  };
  const auto policy =
      detail::make_team_policy(space, N * E, level, bytes, body, settings.team_size);
  Kokkos::parallel_for("hpt::ensemble_rollout", policy, body);

  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
