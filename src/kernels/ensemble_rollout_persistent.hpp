#pragma once
// A persistent variant of the ensemble rollout (docs/method.md#ensemble-rollout,
// docs/bench.md#limits) for GPUs: each path's (scenario, member) GRU units are split over T teams
// that stay resident for all Y steps, each holding its slice of the recurrent and input weights in
// team scratch (on-chip), so the weights never leave the chip after the first step. Where the slice
// does not fit, the team keeps the rows that fit and reads the others from global memory every
// step, as many as the L2 cache can keep from step to step through the caches and the rest as
// streaming loads (plan_persistent_rollout says how many of each). The T teams of a path meet once
// per step (twice with reset Before) at a barrier built from a global atomic counter, exchanging
// the new h and partial head sums through global memory (L2). Every team then redoes the cheap
// per-path tail (prior_sample, LossHeadStep) in the same fixed order, so all teams of a path hold
// bit-identical x and loss state without a second exchange. The GRU is GruCell over the team's
// units with the weights read through GruSliceRows; with reset Before the cell's two passes
// straddle the path barrier, so that convention keeps its own split of the same pieces
// (gru_gate_sums, gru_update_before).
//
// The counter barrier deadlocks unless every team of the launch is resident at once; see
// plan_persistent_rollout for the rule that guarantees it.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_persistent_plan.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/gru_weights.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_loss_head.hpp"
#include "kernels/rollout_prior.hpp"
#include "kernels/rollout_step.hpp"
#include "kernels/rollout_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

namespace detail {

// Member m's weight rows for a team's slice of U units from u0 (a GruCell row source): row g*U + u
// of the slice (gate g of unit u0 + u) is in the team's scratch `held`, as [W_g | U_g] (I + H
// values), while g*U + u < resident; the other rows are read in place from global memory, those of
// the units from u0 + stream_from on with streaming loads.
template <class Real, class Mem>
struct GruSliceRows {
  using value_type = Real;
  GruGlobalRows<Real, Mem> global;
  const Real* held;
  int resident, stream_from, u0, U;
  KOKKOS_INLINE_FUNCTION int hidden() const { return global.hidden(); }
  KOKKOS_INLINE_FUNCTION int input() const { return global.input(); }
  KOKKOS_INLINE_FUNCTION WeightRow<Real> row(const int g, const int j) const {
    const int local = g * U + (j - u0);
    if (local < resident) {
      const Real* row = held + std::size_t(local) * (input() + hidden());
      return {row, row + input()};
    }
    const int r = g * hidden() + j;
    return {&global.w.w_ih(global.m, r, 0), &global.w.w_hh(global.m, r, 0), j - u0 >= stream_from};
  }
  KOKKOS_INLINE_FUNCTION Real b_ih(const int g, const int j) const { return global.b_ih(g, j); }
  KOKKOS_INLINE_FUNCTION Real b_hh(const int g, const int j) const { return global.b_hh(g, j); }
};

// Reads a value another team wrote: volatile, so it bypasses the (non-coherent) L1 cache.
template <class T>
KOKKOS_INLINE_FUNCTION T load_shared_global(const T* p) {
  return *static_cast<const volatile T*>(p);
}

// Barrier of the `teams` teams of one path: each team arrives once (after a fence that publishes
// its global writes) and waits until the counter reaches `target` = teams * barriers passed.
template <class TeamMember>
KOKKOS_INLINE_FUNCTION void path_barrier(const TeamMember& team, unsigned int* counter,
                                         const unsigned int target) {
  team.team_barrier();
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    Kokkos::memory_fence();
    Kokkos::atomic_fetch_add(counter, 1u);
    while (load_shared_global(counter) < target) {
    }
    Kokkos::memory_fence();
  });
  team.team_barrier();
}

}  // namespace detail

// Same contract, random draws and outputs as ensemble_rollout (up to rounding: sums run in another
// order). Requires persistent_rollout_supported for these sizes. settings.team_size is ignored (one
// vector group per unit). Allocates a small exchange buffer (h, partial sums, counters) per call.
// A nonzero scratch_limit caps the team scratch below the backend's maximum, so fewer weight rows
// stay on chip (for tests of the partly resident split).
template <class Space, class Real>
HPT_LAUNCHER void ensemble_rollout_persistent(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const View2<Real, typename Space::memory_space>& h0,
    const RolloutInputs<Real, typename Space::memory_space>& in, const RolloutSettings& settings,
    const RolloutOutputs<Real, typename Space::memory_space>& out,
    const std::size_t scratch_limit = 0,
    RolloutWorkspace<Real, typename Space::memory_space>* workspace = nullptr) {
  using Mem = typename Space::memory_space;
  const int E = params.members();
  const int H = params.hidden();
  const int S = params.stochastic();
  const int I = params.input();
  const int Y = settings.horizon;
  const int N = settings.scenarios;
  const FeatureUpdate mode = settings.feature_update;
  detail::check_rollout_arguments(params, h0, in, settings, out, "ensemble_rollout_persistent");
  if (E == 0) return;
  const PersistentRolloutPlan plan =
      plan_persistent_rollout<Space, Real>(E, N, H, I, S, scratch_limit);
  HPT_REQUIRE(plan.supported, "ensemble_rollout_persistent: sizes not supported on this backend");

  const int T = plan.teams_per_path;
  const int U = plan.units_per_team;
  const int R = plan.rows_in_scratch;
  const int F = plan.stream_from;
  const int Q = detail::persistent_head_count(S);
  const int triples = (Q + 2) / 3;  // head values in groups of three
  const int P = N * E;
  // Exchange buffers, double-buffered by step parity: a fast team writes step k+1 while a slow one
  // may still read step k, but never step k+2 (it must first pass the barrier the slow one is at).
  // The caller's workspace where it passes one, else buffers of this call alone.
  RolloutWorkspace<Real, Mem> own;
  RolloutWorkspace<Real, Mem>& ws = workspace ? *workspace : own;
  ws.size_persistent(P, H, T, Q, reset == GruReset::Before);
  const View3<Real, Mem> h_x = ws.h, rh_x = ws.rh;
  const View4<Real, Mem> part_x = ws.part;
  const View1<unsigned int, Mem> counters = ws.counters;
  Kokkos::deep_copy(space, counters, 0u);

  using Policy = Kokkos::TeamPolicy<Space>;
  using Scratch = detail::ScratchView1<Space, Real>;
  using StateScratch = detail::ScratchView1<Space, LossState<Real>>;
  const RssmParams<Real, Mem> p = params;
  const std::uint64_t seed = settings.seed;
  const Real clamp = Real(settings.clamp);
  const int W = I + H;  // columns of a weight row in scratch: [W_g x-part | U_g h-part]
  const bool before = reset == GruReset::Before;

  const auto body = KOKKOS_LAMBDA(const typename Policy::member_type& team) {
    const int path = team.league_rank() / T;
    const int t = team.league_rank() % T;
    const int n = path / E;
    const int m = path % E;
    const int u0 = t * U;
    const int units = (u0 + U <= H ? U : H - u0);
    Scratch w(team.team_scratch(0), std::size_t(R) * W);
    Scratch hs(team.team_scratch(0), H);
    Scratch x(team.team_scratch(0), I);
    Scratch h_new(team.team_scratch(0), U);
    Scratch h_own(team.team_scratch(0), U);
    Scratch z_own(team.team_scratch(0), U);
    Scratch wn_own(team.team_scratch(0), U);
    Scratch heads(team.team_scratch(0), Q);
    Scratch eps(team.team_scratch(0), S + 1);
    StateScratch state(team.team_scratch(0), 1);
    unsigned int* const counter = &counters(path);
    unsigned int passed = 0;
    const auto features = detail::rollout_features(mode, in.norm_mean, in.norm_inv_std, clamp);
    const detail::GruSliceRows<Real, Mem> rows{{p.gru, m}, w.data(), R, F, u0, U};
    // Head value q's coefficient of unit j: rows of A, B, C_0, C_1, then h itself (|h|^2), then 0
    // past the last value (a triple's padding).
    const auto head_coefficient = [&](const int q, const int j, const Real hj) -> Real {
      return q < S           ? p.prior_mean_w(m, q, j)
             : q < 2 * S     ? p.prior_scale_w(m, q - S, j)
             : q < 2 * S + 2 ? p.loss_head_w(m, q - 2 * S, j)
             : q < Q         ? hj
                             : Real(0);
    };

    // My resident weight rows, once: row g*U + u < R holds
    // [w_ih(m, gH + u0 + u, :) | w_hh(m, gH + u0 + u, :)].
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3 * units), [&](const int r) {
      const int g = r / units, u = r % units;
      if (g * U + u >= R) return;
      const int row = g * H + u0 + u;
      Real* dst = &w((g * U + u) * W);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, I),
                           [&](const int c) { dst[c] = p.gru.w_ih(m, row, c); });
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, H),
                           [&](const int c) { dst[I + c] = p.gru.w_hh(m, row, c); });
    });
    detail::RolloutPathStart::invoke(team, Kokkos::subview(h0, m, Kokkos::ALL()), in.x0,
                                     in.loss_states(in.run), hs, x, state(0),
                                     [&](const LossState<Real>& st) {
                                       if (t == 0) out.loss_paths(n, m, 0) = math::exp(st.log_loss);
                                     });

    for (int k = 1; k <= Y; ++k) {
      const int buf = k % 2;
      // The step's normal draws, by the last vector group (idle in the GRU phase when the team has
      // more groups than units), so the serial tail below does not wait on them.
      if (team.team_rank() == team.team_size() - 1) {
        const detail::RolloutDraws draws{seed, n, m, k};
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, S + 1),
                             [&](const int i) { eps(i) = Real(draws(i)); });
      }
      if (!before) {  // my units' new h, published for the other teams of the path
        detail::GruCell::invoke(team, rows, GruReset::After, x, hs, hs, u0, u0 + units,
                                [&](const int j, const Real v) {
                                  h_new(j - u0) = v;
                                  h_x(buf, path, j) = v;
                                });
      } else {
        // r, z and W_n x of my units; r * h is published and U_n (r * h) follows after the path
        // barrier (z is kept across it, so the cell's passes differ from GruCell's).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units), [&](const int u) {
          const int j = u0 + u;
          const auto g = detail::gru_gate_sums<false>(team, rows, j, x, hs);
          const Real r = math::sigmoid(g.wx.a + rows.b_ih(0, j) + g.uh.a + rows.b_hh(0, j));
          const Real z = math::sigmoid(g.wx.b + rows.b_ih(1, j) + g.uh.b + rows.b_hh(1, j));
          Kokkos::single(Kokkos::PerThread(team), [&]() {
            h_own(u) = hs(j);
            z_own(u) = z;
            wn_own(u) = g.wx.c + rows.b_ih(2, j) + rows.b_hh(2, j);
            rh_x(buf, path, j) = r * hs(j);
          });
        });
        detail::path_barrier(team, counter, unsigned(T) * ++passed);
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H), [&](const int j) {
          hs(j) = detail::load_shared_global(&rh_x(buf, path, j));
        });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units), [&](const int u) {
          const int j = u0 + u;
          const auto wn = rows.row(2, j);
          const Real un = detail::recurrent_sums<1>(team, wn, wn, wn, hs, H).a;
          const Real v = detail::gru_update_before(z_own(u), wn_own(u) + un, h_own(u));
          Kokkos::single(Kokkos::PerThread(team), [&]() {
            h_new(u) = v;
            h_x(buf, path, j) = v;
          });
        });
      }
      team.team_barrier();

      // My units' share of A h, B h, C_0 h, C_1 h and |h|^2, three head values per vector group so
      // that each group's coefficient loads are in flight together.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, triples), [&](const int i) {
        detail::Sum3<Real> acc;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, units),
            [&](const int u, detail::Sum3<Real>& a) {
              const int j = u0 + u;
              const Real hj = h_new(u);
              a.a += head_coefficient(3 * i, j, hj) * hj;
              a.b += head_coefficient(3 * i + 1, j, hj) * hj;
              a.c += head_coefficient(3 * i + 2, j, hj) * hj;
            },
            acc);
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          const Real sums[3] = {acc.a, acc.b, acc.c};
          for (int d = 0; d < 3 && 3 * i + d < Q; ++d) part_x(buf, path, t, 3 * i + d) = sums[d];
        });
      });
      detail::path_barrier(team, counter, unsigned(T) * ++passed);

      // The new h and the head sums of the whole path, summed over the teams in a fixed order,
      // three head values per vector group (its lanes' loads all in flight: one round trip to L2).
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H), [&](const int j) {
        hs(j) = detail::load_shared_global(&h_x(buf, path, j));
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, triples), [&](const int i) {
        detail::Sum3<Real> acc;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, T),
            [&](const int tt, detail::Sum3<Real>& a) {
              a.a += detail::load_shared_global(&part_x(buf, path, tt, 3 * i));
              if (3 * i + 1 < Q)
                a.b += detail::load_shared_global(&part_x(buf, path, tt, 3 * i + 1));
              if (3 * i + 2 < Q)
                a.c += detail::load_shared_global(&part_x(buf, path, tt, 3 * i + 2));
            },
            acc);
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          const Real sums[3] = {acc.a, acc.b, acc.c};
          for (int d = 0; d < 3 && 3 * i + d < Q; ++d) heads(3 * i + d) = sums[d];
        });
      });
      team.team_barrier();

      // s = mu_s + sigma_s * eps, formed where the loss head reads it; then the loss head, hidden
      // norm and the path update, identical in every team of the path.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](const int) {
        const auto s = [&](const int i) {
          return detail::prior_sample(p, m, i, heads(i), heads(S + i), eps(i));
        };
        detail::LossHeadStep::invoke(team, p, m, heads(2 * S), heads(2 * S + 1), s, eps(S),
                                     state(0), features, x, [&](const LossState<Real>& st) {
                                       if (t == 0) {
                                         out.loss_paths(n, m, k) = math::exp(st.log_loss);
                                         out.hidden_norms(n, m, k - 1) =
                                             math::sqrt(heads(2 * S + 2));
                                       }
                                     });
      });
      team.team_barrier();
    }

    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, units),
                         [&](const int u) { out.final_latents(n, m, u0 + u) = hs(u0 + u); });
  };

  // One vector group per unit for the GRU, and per three head values for the head sums and the
  // exchange (each group waits one L2 round trip for its three, so more groups would not help).
  // Where the team cannot have a group per unit (H = 1024: 40 units per team), shorter vectors
  // (down to 8 lanes) let every unit have its own: one round of the GRU instead of two.
  const int wanted = U > triples ? U : triples;
  const auto most_groups = [&](const int vector) {
    Policy probe(space, P * T, 1, vector);
    probe.set_scratch_size(0, Kokkos::PerTeam(plan.scratch_bytes));
    return probe.team_size_max(body, Kokkos::ParallelForTag());
  };
  int vector = detail::team_vector_length<Space>();
  int most = most_groups(vector);
  while (U > most && vector > 8) most = most_groups(vector /= 2);
  Policy policy(space, P * T, wanted < most ? wanted : most, vector);
  policy.set_scratch_size(0, Kokkos::PerTeam(plan.scratch_bytes));
  Kokkos::parallel_for("hpt::ensemble_rollout_persistent", policy, body);

  detail::mean_hidden_norm(space, out);
}

}  // namespace hpt
