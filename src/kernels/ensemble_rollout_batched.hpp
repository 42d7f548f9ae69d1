#pragma once
// The ensemble rollout (docs/method.md#ensemble-rollout) of R runs at once: one team per (run,
// scenario, member) with the team-per-path formulas of ensemble_rollout.hpp (the shared detail::
// helpers), each run from its own latents h0(r, :, :), features, loss state and normaliser row. Run
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
  using Scratch = detail::ScratchView1<Space, Real>;
  using StateScratch = detail::ScratchView1<Space, LossState<Real>>;
  const std::size_t bytes = StateScratch::shmem_size(1) + 3 * Scratch::shmem_size(H) +
                            Scratch::shmem_size(I) + Scratch::shmem_size(S);
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
    StateScratch state(team.team_scratch(level), 1);
    Scratch h_a(team.team_scratch(level), H);
    Scratch h_b(team.team_scratch(level), H);
    Scratch work(team.team_scratch(level), H);
    Scratch x(team.team_scratch(level), I);
    Scratch s(team.team_scratch(level), S);
    const auto mean = Kokkos::subview(input.norm_mean, r, Kokkos::ALL());
    const auto inv_std = Kokkos::subview(input.norm_inv_std, r, Kokkos::ALL());

    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H),
                         [&](const int j) { h_a(j) = input.h0(r, m, j); });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, I),
                         [&](const int k) { x(k) = input.x0(r, k); });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      state(0) = input.loss_states(r);
      paths(r, n, m, 0) = math::exp(state(0).log_loss);
    });
    team.team_barrier();

    for (int k = 1; k <= Y; ++k) {
      const Scratch h_old = (k % 2 == 1) ? h_a : h_b;
      const Scratch h = (k % 2 == 1) ? h_b : h_a;
      detail::gru_cell_team(team, p.gru, m, reset, x, h_old, work, h, 0, H);
      team.team_barrier();

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

      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](const int) {
        detail::Sum3<Real> ah;  // C_0 h, C_1 h
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
          detail::advance_loss_features(state(0), delta, mode, x, mean, inv_std, clamp);
          paths(r, n, m, k) = math::exp(state(0).log_loss);
        });
      });
      team.team_barrier();
    }
  };
  const auto policy =
      detail::make_team_policy(space, R * N * E, level, bytes, body, settings.team_size);
  Kokkos::parallel_for("hpt::ensemble_rollout_batched", policy, body);
}

}  // namespace hpt
