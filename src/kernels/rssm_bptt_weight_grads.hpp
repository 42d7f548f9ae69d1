#pragma once
// The weight and bias gradients of the RSSM's truncated BPTT (kernels/rssm_bptt.hpp) as one batched
// reduction over the window: from the per-sample pre-activation gradients D_m (K x rows) that the
// backward sweep stored and the inputs X_m (K x cols) that the forward kept, every tensor's
// gradient is dW_m = D_m^T X_m and its bias' db_m = D_m^T 1 (a batched GEMM). One team per member
// and row of a tensor, E (3H + 2S + 2) teams with no order between them, where the sweep itself
// must run one member per team.
#include <Kokkos_Core.hpp>

#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/rssm_bptt_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {
namespace detail {

// One row of D^T X inside a team: out(k) = sum_t d(t) x(t, k) for k < cols and bias() = sum_t d(t),
// with d and x callables, summed from the last sample to the first (the order of the backward
// sweep). The team's threads and vector lanes split the columns.
struct OuterSumRow {
  template <class TeamMember, class D, class X, class Out, class Bias>
  KOKKOS_INLINE_FUNCTION static void invoke(const TeamMember& team, const int steps, const int cols,
                                            const D& d, const X& x, const Out& out,
                                            const Bias& bias) {
    using Real = typename Out::non_const_value_type;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, cols),
                         [&](const int k) { out(k) = Real(0); });
    // Accumulated in the row itself (a few KB), sample by sample: the loop over columns reads
    // consecutive x, which a CPU vectorises; the barrier keeps every column's sum in order.
    for (int t = steps - 1; t >= 0; --t) {
      team.team_barrier();
      const Real dt = d(t);
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, cols),
                           [&](const int k) { out(k) += dt * x(t, k); });
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Real sum = 0;
      for (int t = steps - 1; t >= 0; --t) sum += d(t);
      bias() = sum;
    });
  }
};

// Row q (of 3H) of member m's GRU gradients: dW_ih(q) from x_t, dW_hh(q) from h_{t-1}, or
// r_t * h_{t-1} for the candidate with Before, whose recurrent gradient is dhn with After.
template <class TeamMember, class Real, class Mem>
KOKKOS_INLINE_FUNCTION void gru_row_grads(const TeamMember& team, const GruWeights<Real, Mem>& g,
                                          const int m, const int q, const GruReset reset,
                                          const int steps, const RssmWindow<Real, Mem>& win,
                                          const RssmBpttWorkspace<Real, Mem>& ws) {
  const int H = g.hidden();
  const bool candidate = q >= 2 * H;
  const bool via_hn = candidate && reset == GruReset::After;
  const bool gated_h = candidate && reset == GruReset::Before;
  const auto gi = [&](const int t) { return ws.dgate(m, t, q); };
  const auto gh = [&](const int t) { return via_hn ? ws.dhn(m, t, q - 2 * H) : ws.dgate(m, t, q); };
  const auto x = [&](const int t, const int k) { return win.x(t, k); };
  const auto v = [&](const int t, const int k) {
    return gated_h ? ws.r(m, t, k) * ws.h(m, t, k) : ws.h(m, t, k);
  };
  OuterSumRow::invoke(team, steps, g.input(), gi, x, Kokkos::subview(g.w_ih, m, q, Kokkos::ALL()),
                      Kokkos::subview(g.b_ih, m, q));
  OuterSumRow::invoke(team, steps, H, gh, v, Kokkos::subview(g.w_hh, m, q, Kokkos::ALL()),
                      Kokkos::subview(g.b_hh, m, q));
}

// Row q (of 2S) of member m's prior gradients: dA(i) from dmu (q = i < S), dB(i) from dpre
// (q = S + i), both against h_t.
template <class TeamMember, class Real, class Mem>
KOKKOS_INLINE_FUNCTION void prior_row_grads(const TeamMember& team, const GradRssm<Real, Mem>& g,
                                            const int m, const int q, const int steps,
                                            const RssmBpttWorkspace<Real, Mem>& ws) {
  const int S = g.stochastic();
  const bool mean = q < S;
  const int i = mean ? q : q - S;
  const auto d = [&](const int t) { return mean ? ws.dmu(m, t, i) : ws.dpre(m, t, i); };
  const auto h = [&](const int t, const int j) { return ws.h(m, t + 1, j); };
  const auto& w = mean ? g.prior_mean_w : g.prior_scale_w;
  const auto& b = mean ? g.prior_mean_b : g.prior_scale_b;
  OuterSumRow::invoke(team, steps, g.hidden(), d, h, Kokkos::subview(w, m, i, Kokkos::ALL()),
                      Kokkos::subview(b, m, i));
}

// Row o (of 2) of member m's loss head gradients: dC(o) from dhead(o) against c_t = [h_t; s_t].
template <class TeamMember, class Real, class Mem>
KOKKOS_INLINE_FUNCTION void head_row_grads(const TeamMember& team, const GradRssm<Real, Mem>& g,
                                           const int m, const int o, const int steps,
                                           const RssmBpttWorkspace<Real, Mem>& ws) {
  const int H = g.hidden();
  const auto d = [&](const int t) { return ws.dhead(m, t, o); };
  const auto c = [&](const int t, const int q) {
    return q < H ? ws.h(m, t + 1, q) : ws.s(m, t, q - H);
  };
  OuterSumRow::invoke(team, steps, H + g.stochastic(), d, c,
                      Kokkos::subview(g.loss_head_w, m, o, Kokkos::ALL()),
                      Kokkos::subview(g.loss_head_b, m, o));
}

// grad <- every weight and bias gradient of every member (overwritten) from the pre-activation
// gradients of the window's first window.steps samples in ws.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_weight_grads(
    const Space& space, const GradRssm<Real, typename Space::memory_space>& grad,
    const GruReset reset, const RssmWindow<Real, typename Space::memory_space>& window,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws) {
  const int H = grad.hidden(), S = grad.stochastic();
  const int rows = 3 * H + 2 * S + 2;  // GRU, prior, loss head
  const int steps = window.steps;
  const GradRssm<Real, typename Space::memory_space> g = grad;
  const RssmWindow<Real, typename Space::memory_space> win = window;
  const RssmBpttWorkspace<Real, typename Space::memory_space> w = ws;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;

  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank() / rows;
    const int q = team.league_rank() % rows;
    if (q < 3 * H) {
      gru_row_grads(team, g.gru, m, q, reset, steps, win, w);
    } else if (q < 3 * H + 2 * S) {
      prior_row_grads(team, g, m, q - 3 * H, steps, w);
    } else {
      head_row_grads(team, g, m, q - 3 * H - 2 * S, steps, w);
    }
  };
  const auto policy = detail::make_team_policy(space, grad.members() * rows, 0, 0, body, 0);
  Kokkos::parallel_for("hpt::rssm_bptt_weight_grads", policy, body);
}

}  // namespace detail
}  // namespace hpt
