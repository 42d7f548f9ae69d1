#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) of R runs at once: one team per (run,
// scenario, member) with the team-per-path step of ensemble_rollout.hpp (RolloutTeamStep), each
// run from its own latents h0(r, :, :), features, loss state and normaliser row. Run
// r draws its random numbers with seed batched_rollout_seed(settings.seed, r), so its paths equal
// those of ensemble_rollout for that run alone with that seed, bit for bit.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/math.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_step.hpp"

namespace hpt {

// The seed of run r's draws in a batched rollout with seed `seed`.
KOKKOS_INLINE_FUNCTION std::uint64_t batched_rollout_seed(std::uint64_t seed, int run) {
  return rng::key(seed, std::uint64_t(run), 0xba7c4ed);
}

template <class Real, class Mem = MemSpace>
struct BatchedRolloutInputs {
  View3<Real, Mem> h0;                      // (R, E, H) latents each run starts from
  View2<Real, Mem> x0;                      // (R, I) normalised features at t, as encoded
  View1<LossState<Real>, Mem> loss_states;  // (R) extract_loss_state of every run
  View2<Real, Mem> norm_mean;               // (R, I) normaliser centre (Rich)
  View2<Real, Mem> norm_inv_std;            // (R, I) normaliser 1/std (Rich)
  View1<int, Mem> active;                   // (R) 0: run r is skipped (its paths are not written)
};

// loss_paths (R, N, E, Y+1): L = exp(l) along every path; entry 0 is the current loss.
template <class Space, class Real>
HPT_LAUNCHER void ensemble_rollout_batched(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const BatchedRolloutInputs<Real, typename Space::memory_space>& in,
    const RolloutSettings& settings, const View4<Real, typename Space::memory_space>& loss_paths) {
  const int E = params.members();
  const int H = params.hidden();
  const int S = params.stochastic();
  const int I = params.input();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const int R = int(in.x0.extent(0));
  const FeatureUpdate mode = settings.feature_update;
  HPT_REQUIRE(Y >= 0 && N >= 1, "ensemble_rollout_batched: needs horizon >= 0 and scenarios >= 1");
  HPT_REQUIRE(int(in.h0.extent(0)) == R && int(in.h0.extent(1)) == E && int(in.h0.extent(2)) == H,
              "ensemble_rollout_batched: h0 must be (R, E, H)");
  HPT_REQUIRE(int(in.x0.extent(1)) == I, "ensemble_rollout_batched: x0 must be (R, I)");
  HPT_REQUIRE(int(in.loss_states.extent(0)) == R && int(in.active.extent(0)) == R,
              "ensemble_rollout_batched: loss_states and active must have R entries");
  HPT_REQUIRE(settings.clamp > 0, "ensemble_rollout_batched: clamp must be positive");
  if (mode == FeatureUpdate::Rich) {
    HPT_REQUIRE(I >= rich::kCount,
                "ensemble_rollout_batched: Rich feature update needs the 64 rich features");
    HPT_REQUIRE(int(in.norm_mean.extent(0)) == R && int(in.norm_mean.extent(1)) == I &&
                    int(in.norm_inv_std.extent(0)) == R && int(in.norm_inv_std.extent(1)) == I,
                "ensemble_rollout_batched: normaliser mean and 1/std must be (R, I)");
  } else {
    HPT_REQUIRE(I >= 1, "ensemble_rollout_batched: LossOnly feature update needs I >= 1");
  }
  HPT_REQUIRE(int(loss_paths.extent(0)) == R && int(loss_paths.extent(1)) == N &&
                  int(loss_paths.extent(2)) == E && int(loss_paths.extent(3)) == Y + 1,
              "ensemble_rollout_batched: loss_paths must be (R, N, E, Y+1)");
  if (E == 0 || R == 0) return;

  using Policy = Kokkos::TeamPolicy<Space>;
  using PathScratch = detail::RolloutTeamScratch<Space, Real>;
  using Scratch = typename PathScratch::Scratch;
  const std::size_t bytes = PathScratch::shmem_size(H, I, S);
  const int level = detail::scratch_level_for<Space>(bytes);

  const RssmParams<Real, typename Space::memory_space> p = params;
  const BatchedRolloutInputs<Real, typename Space::memory_space> input = in;
  const auto paths = loss_paths;
  const std::uint64_t base_seed = settings.seed;
  const Real clamp = Real(settings.clamp);

  const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    const int m = team.league_rank() % E;
    const int n = (team.league_rank() / E) % N;
    const int r = team.league_rank() / E / N;
    if (input.active(r) == 0) return;
    const std::uint64_t seed = batched_rollout_seed(base_seed, r);
    const PathScratch sc(team, level, H, I, S);
    const auto features =
        detail::rollout_features(mode, Kokkos::subview(input.norm_mean, r, Kokkos::ALL()),
                                 Kokkos::subview(input.norm_inv_std, r, Kokkos::ALL()), clamp);

    detail::RolloutPathStart::invoke(
        team, Kokkos::subview(input.h0, r, m, Kokkos::ALL()),
        Kokkos::subview(input.x0, r, Kokkos::ALL()), input.loss_states(r), sc.h_a, sc.x,
        sc.state(0),
        [&](const LossState<Real>& st) { paths(r, n, m, 0) = math::exp(st.log_loss); });
    for (int k = 1; k <= Y; ++k) {
      const Scratch h_old = (k % 2 == 1) ? sc.h_a : sc.h_b;
      const Scratch h = (k % 2 == 1) ? sc.h_b : sc.h_a;
      detail::RolloutTeamStep::invoke(
          team, p, m, reset, detail::RolloutDraws{seed, n, m, k}, sc.x, h_old, sc.work, h, sc.s,
          sc.state(0), features,
          [&](const LossState<Real>& st, Real) { paths(r, n, m, k) = math::exp(st.log_loss); });
    }
  };
  const auto policy =
      detail::make_team_policy(space, R * N * E, level, bytes, body, settings.team_size);
  Kokkos::parallel_for("hpt::ensemble_rollout_batched", policy, body);
}

}  // namespace hpt
