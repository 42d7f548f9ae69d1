#pragma once
// The forward of the RSSM's truncated BPTT with each member's GRU step split across teams
// (kernels/rssm_bptt_split.hpp): per sample one launch of E x blocks teams (two with reset Before,
// whose U_n (r * h) needs the whole reset gate first), then the prior, head and loss of every
// sample at once, since none of them feeds back into the recurrence.
#include <Kokkos_Core.hpp>

#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/rssm_bptt_gru.hpp"
#include "kernels/rssm_bptt_sample.hpp"
#include "kernels/rssm_bptt_split.hpp"
#include "kernels/rssm_bptt_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt::detail {

// ws.h(m, t + 1) and the gates of sample t from ws.h(m, t) and ws.wx (the input products), every
// member, by blocks of units.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_split_gru_forward(
    const Space& space, const GruWeights<Real, typename Space::memory_space>& weights,
    const GruReset reset, const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const int t) {
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Row = BpttRow<Real, Mem>;
  const int H = weights.hidden();
  const int blocks = bptt_split_blocks(H);
  const GruWeights<Real, Mem> w = weights;
  const RssmBpttWorkspace<Real, Mem> a = ws;
  const auto policy = bptt_split_policy(space, weights.members() * blocks);
  // pass 0: every gate with After, the reset gate with Before; pass 1: Before's z, n and h.
  for (int pass = 0; pass < (reset == GruReset::After ? 1 : 2); ++pass) {
    const auto body = KOKKOS_LAMBDA(const Member& team) {
      const int m = team.league_rank() / blocks;
      const UnitRange units = unit_block(team.league_rank() % blocks, kBpttSplitUnits, H);
      const GruInputSaved<Row> x{bptt_row(a.wx, m, t)};
      const Row h_prev = bptt_row(a.h, m, t);
      const Row h = bptt_row(a.h, m, t + 1);
      const GruSaved<Row> saved = gru_saved_row(a, m, t);
      if (reset == GruReset::After) {
        gru_forward_after(team, w, m, x, h_prev, h, saved, units);
      } else if (pass == 0) {
        gru_forward_reset(team, w, m, x, h_prev, saved, units);
      } else {
        gru_forward_update(team, w, m, x, h_prev, h, saved, units);
      }
    };
    Kokkos::parallel_for("hpt::rssm_bptt_split_gru_forward", policy, body);
  }
}

// The prior, loss head and weighted loss of every member and sample of the window from ws.h, then
// loss(m) = the member's sum over the samples in sample order.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_samples_forward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const RssmWindow<Real, typename Space::memory_space>& window, const BpttLossWeights<Real> c,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const View1<Real, typename Space::memory_space>& loss) {
  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  const int steps = window.steps;
  const RssmParams<Real, Mem> p = params;
  const RssmWindow<Real, Mem> win = window;
  const RssmBpttWorkspace<Real, Mem> w = ws;
  const View1<Real, Mem> out = loss;
  for_each_member_sample(
      space, "hpt::rssm_bptt_samples_forward", params.members(), steps,
      KOKKOS_LAMBDA(const Member& team, const int m, const int t) {
        sample_forward(team, p, m, t, win, w, c);
      });
  Kokkos::parallel_for(
      "hpt::rssm_bptt_window_loss", Kokkos::RangePolicy<Space>(space, 0, params.members()),
      KOKKOS_LAMBDA(const int m) { out(m) = w.window_loss(m, steps); });
}

// The forward of rssm_bptt_forward after the input products, split.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_split_forward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const RssmWindow<Real, typename Space::memory_space>& window,
    const BpttLossWeights<Real> c, const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const View1<Real, typename Space::memory_space>& loss) {
  Kokkos::deep_copy(space, Kokkos::subview(ws.h, Kokkos::ALL(), 0, Kokkos::ALL()), window.h0);
  for (int t = 0; t < window.steps; ++t)
    rssm_bptt_split_gru_forward(space, params.gru, reset, ws, t);
  rssm_bptt_samples_forward(space, params, window, c, ws, loss);
}

}  // namespace hpt::detail
