#pragma once
// The backward sweep of the RSSM's truncated BPTT with each member's GRU step split across teams
// (kernels/rssm_bptt_split.hpp). The prior's and head's gradients reaching h_t do not depend on
// the sweep: one launch forms them for every sample into ws.dh_heads. Then one launch per sample
// (two with reset Before) carries dL/dh back: the blocks of k of the recurrent product
// sum_j U(j, k) d_j of sample t, followed in the same team by the gate gradients of sample t - 1
// of the same units, which need only dL/dh_{t-1}(k).
#include <Kokkos_Core.hpp>

#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/rssm_bptt_gru.hpp"
#include "kernels/rssm_bptt_sample.hpp"
#include "kernels/rssm_bptt_split.hpp"
#include "kernels/rssm_bptt_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt::detail {

// dhead, dmu, dpre and dh_heads of every member and sample of the window.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_samples_backward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const RssmWindow<Real, typename Space::memory_space>& window, const BpttLossWeights<Real> c,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws) {
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  const RssmParams<Real, Mem> p = params;
  const RssmWindow<Real, Mem> win = window;
  const RssmBpttWorkspace<Real, Mem> w = ws;
  for_each_member_sample(
      space, "hpt::rssm_bptt_samples_backward", params.members(), window.steps,
      KOKKOS_LAMBDA(const Member& team, const int m, const int t) {
        sample_backward(team, p, m, t, win, w, c, ZeroVec<Real>{}, bptt_row(w.dh_heads, m, t));
      });
}

// One launch of the sweep, by blocks of units k. Phase Reset (Before only): da_r(k) of sample t
// and its part of carry(k). Phase Step: carry(k) += the recurrent product of sample t (none for
// t = steps: the sweep's start), then sample t - 1's gate gradients from dL/dh_{t-1}(k) =
// carry(k) + dh_heads(t - 1, k), leaving carry(k) = its direct path.
enum class SplitSweepPhase { Reset, Step };

template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_split_sweep(
    const Space& space, const GruWeights<Real, typename Space::memory_space>& weights,
    const GruReset reset, const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const int steps, const int t, const SplitSweepPhase phase) {
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Row = BpttRow<Real, Mem>;
  const int H = weights.hidden();
  const int blocks = bptt_split_blocks(H);
  const GruWeights<Real, Mem> w = weights;
  const RssmBpttWorkspace<Real, Mem> a = ws;
  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank() / blocks;
    const UnitRange units = unit_block(team.league_rank() % blocks, kBpttSplitUnits, H);
    const Row carry = Kokkos::subview(a.carry, m, Kokkos::ALL());
    if (phase == SplitSweepPhase::Reset) {
      const GruBackwardWork<Row> work{bptt_row(a.dgate, m, t), bptt_row(a.dhn, m, t)};
      gru_reset_grads(team, w, m, bptt_row(a.h, m, t), gru_saved_row(a, m, t), work, carry, units);
      return;
    }
    if (t < steps) {
      const GruBackwardWork<Row> work{bptt_row(a.dgate, m, t), bptt_row(a.dhn, m, t)};
      gru_recurrent_grad(team, w, m, reset, work, carry, units);
      team.team_barrier();
    }
    const Row dh_heads = bptt_row(a.dh_heads, m, t - 1);
    const auto dh = [&](const int k) { return t < steps ? carry(k) + dh_heads(k) : dh_heads(k); };
    const GruBackwardWork<Row> prev{bptt_row(a.dgate, m, t - 1), bptt_row(a.dhn, m, t - 1)};
    gru_pointwise_grads(team, reset, dh, bptt_row(a.h, m, t - 1), gru_saved_row(a, m, t - 1), prev,
                        carry, units);
  };
  const auto policy = bptt_split_policy(space, weights.members() * blocks);
  Kokkos::parallel_for("hpt::rssm_bptt_split_sweep", policy, body);
}

// The backward sweep of rssm_bptt_backward, split: every sample's pre-activation gradients into
// ws (the weight gradients follow, kernels/rssm_bptt_weight_grads.hpp).
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_split_backward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const RssmWindow<Real, typename Space::memory_space>& window,
    const BpttLossWeights<Real> c,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws) {
  const int steps = window.steps;
  if (steps < 1) return;
  rssm_bptt_samples_backward(space, params, window, c, ws);
  for (int t = steps; t >= 1; --t) {
    if (t < steps && reset == GruReset::Before)
      rssm_bptt_split_sweep(space, params.gru, reset, ws, steps, t, SplitSweepPhase::Reset);
    rssm_bptt_split_sweep(space, params.gru, reset, ws, steps, t, SplitSweepPhase::Step);
  }
  if (reset == GruReset::Before)  // sample 0's reset gate: no product into h0 follows
    rssm_bptt_split_sweep(space, params.gru, reset, ws, steps, 0, SplitSweepPhase::Reset);
}

}  // namespace hpt::detail
