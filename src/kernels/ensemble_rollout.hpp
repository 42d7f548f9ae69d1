#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) as one kernel launch for the whole
// horizon: one team per (scenario, member) loops over the Y steps (RolloutTeamStep of
// rollout_step.hpp), keeping h, x, s and the path's loss state in team scratch and reading the
// weights from global memory. Random draws are counter-based (core/rng.hpp), keyed
// by (seed, scenario, member, step, index), so a rollout is identical on every backend and thread
// count.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rich_features.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_step.hpp"
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

// Paths per partial sum of mean_hidden_norm.
constexpr int kHiddenNormChunk = 128;

// mean_hidden_norm(k) = hidden_norms(:, :, k) averaged over the N*E paths p = n*E + m, in double:
// the sums of chunks of kHiddenNormChunk consecutive paths (each in path order, one thread per
// (chunk, k)), then those sums in chunk order. The order is fixed, so the result depends on no
// backend or thread count. The chunks let many threads share the reads: with one thread per k
// summing all paths, the bench's sweep size (81 920 paths, 100 steps) took 13 ms longer on an H200.
template <class Space, class Real>
HPT_LAUNCHER void mean_hidden_norm(const Space& space,
                                   const RolloutOutputs<Real, typename Space::memory_space>& out) {
  const auto hidden_norms = out.hidden_norms;
  const auto mean_norm = out.mean_hidden_norm;
  const int E = int(hidden_norms.extent(1));
  const int Y = int(mean_norm.extent(0));
  const std::int64_t paths = std::int64_t(hidden_norms.extent(0)) * E;
  const int chunks = int((paths + kHiddenNormChunk - 1) / kHiddenNormChunk);
  if (Y == 0) return;
  View2<double, typename Space::memory_space> partial(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rollout_hidden_norm_chunks"), chunks,
      Y);
  Kokkos::parallel_for(
      "hpt::rollout_hidden_norm_chunks",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(chunks) * Y),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int k = int(i % Y);  // consecutive threads read consecutive steps of a path
        const std::int64_t p0 = i / Y * kHiddenNormChunk;
        const std::int64_t p1 = p0 + kHiddenNormChunk < paths ? p0 + kHiddenNormChunk : paths;
        double sum = 0;
        for (std::int64_t p = p0; p < p1; ++p) sum += double(hidden_norms(p / E, p % E, k));
        partial(i / Y, k) = sum;
      });
  const double paths_count = double(paths);
  Kokkos::parallel_for(
      "hpt::rollout_hidden_norm", Kokkos::RangePolicy<Space>(space, 0, Y),
      KOKKOS_LAMBDA(const int k) {
        double sum = 0;
        for (int c = 0; c < chunks; ++c) sum += partial(c, k);
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
  using PathScratch = detail::RolloutTeamScratch<Space, Real>;
  using Scratch = typename PathScratch::Scratch;
  const std::size_t bytes = PathScratch::shmem_size(H, I, S);
  const int level = detail::scratch_level_for<Space>(bytes);

  const RssmParams<Real, typename Space::memory_space> p = params;
  const std::uint64_t seed = settings.seed;
  const Real clamp = Real(settings.clamp);

  const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    const int n = team.league_rank() / E;
    const int m = team.league_rank() % E;
    const PathScratch sc(team, level, H, I, S);
    const auto features = detail::rollout_features(mode, in.norm_mean, in.norm_inv_std, clamp);

    detail::RolloutPathStart::invoke(
        team, Kokkos::subview(h0, m, Kokkos::ALL()), in.x0, in.loss_states(in.run), sc.h_a, sc.x,
        sc.state(0),
        [&](const LossState<Real>& st) { out.loss_paths(n, m, 0) = math::exp(st.log_loss); });
    for (int k = 1; k <= Y; ++k) {
      const Scratch h_old = (k % 2 == 1) ? sc.h_a : sc.h_b;
      const Scratch h = (k % 2 == 1) ? sc.h_b : sc.h_a;
      detail::RolloutTeamStep::invoke(team, p, m, reset, detail::RolloutDraws{seed, n, m, k}, sc.x,
                                      h_old, sc.work, h, sc.s, sc.state(0), features,
                                      [&](const LossState<Real>& st, const Real h2) {
                                        out.loss_paths(n, m, k) = math::exp(st.log_loss);
                                        out.hidden_norms(n, m, k - 1) = math::sqrt(h2);
                                      });
    }

    const Scratch h_last = (Y % 2 == 1) ? sc.h_b : sc.h_a;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H),
                         [&](const int j) { out.final_latents(n, m, j) = h_last(j); });
  };
  const auto policy =
      detail::make_team_policy(space, N * E, level, bytes, body, settings.team_size);
  Kokkos::parallel_for("hpt::ensemble_rollout", policy, body);

  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
