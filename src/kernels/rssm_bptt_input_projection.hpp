#pragma once
// The input side of the GRU gates of every sample of the BPTT window, W_ih x_t + b_ih (kernels/
// rssm_bptt.hpp): x_t does not depend on the recurrence, so all samples are one batched product
// before it, a team per member and gate row (E 3H teams), and the sequential forward reads the
// sums (GruInputSaved) instead of forming them one sample after another on E teams.
#include <Kokkos_Core.hpp>

#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/gru_weights.hpp"
#include "kernels/rssm_bptt_workspace.hpp"

namespace hpt::detail {

// ws.wx(m, t, q) = W_ih(m, q, :) x_t + b_ih(m, q) for the window's first window.steps samples.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_input_projection(
    const Space& space, const GruWeights<Real, typename Space::memory_space>& weights,
    const RssmWindow<Real, typename Space::memory_space>& window,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws) {
  const int rows = 3 * weights.hidden();
  const int I = weights.input();
  const int steps = window.steps;
  const GruWeights<Real, typename Space::memory_space> w = weights;
  const View2<Real, typename Space::memory_space> x = window.x;
  const View3<Real, typename Space::memory_space> wx = ws.wx;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;

  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank() / rows;
    const int q = team.league_rank() % rows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, steps), [&](const int t) {
      Real sum = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, I),
          [&](const int k, Real& acc) { acc += w.w_ih(m, q, k) * x(t, k); }, sum);
      Kokkos::single(Kokkos::PerThread(team), [&]() { wx(m, t, q) = sum + w.b_ih(m, q); });
    });
  };
  const auto policy = make_team_policy(space, weights.members() * rows, 0, 0, body, 0);
  Kokkos::parallel_for("hpt::rssm_bptt_input_projection", policy, body);
}

}  // namespace hpt::detail
