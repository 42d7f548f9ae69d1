#pragma once
// The prior and the loss head of one sample (m, t) of the RSSM's truncated BPTT inside a team
// (kernels/rssm_bptt.hpp), forward and backward, on the window and the workspace. They read h_t but
// feed nothing back into the recurrence, so the one-team sweep calls them sample after sample
// and the split recurrence (kernels/rssm_bptt_split.hpp) for every sample at once.
#include <Kokkos_Core.hpp>

#include "kernels/rssm_bptt_heads.hpp"
#include "kernels/rssm_bptt_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt::detail {

// The loss terms of the training step's window: g_t = w_{m,t} / K, and beta of the KL.
template <class Real>
struct BpttLossWeights {
  Real inv_k, beta;
};

// Zero as a vector: the carry of a sample whose dL/dh through time is added elsewhere.
template <class Real>
struct ZeroVec {
  KOKKOS_INLINE_FUNCTION Real operator()(const int) const { return Real(0); }
};

// Prior sample, loss head and the weighted loss of sample t of member m from h_t = ws.h(m, t + 1).
// Ends with a team barrier.
template <class TeamMember, class Real, class Mem>
KOKKOS_INLINE_FUNCTION void sample_forward(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                           const int m, const int t,
                                           const RssmWindow<Real, Mem>& win,
                                           const RssmBpttWorkspace<Real, Mem>& ws,
                                           const BpttLossWeights<Real> c) {
  const auto h = Kokkos::subview(ws.h, m, t + 1, Kokkos::ALL());
  const auto prior = prior_saved_row(ws, m, t);
  prior_forward(team, p, m, h, Kokkos::subview(win.eps, m, t, Kokkos::ALL()), prior);
  team.team_barrier();
  head_forward(team, p, m, h, prior, win.y(t), win.weight(m, t) * c.inv_k, c.beta,
               Kokkos::subview(ws.head, m, t, Kokkos::ALL()), Kokkos::subview(ws.step_loss, m, t));
  team.team_barrier();
}

// dhead, dmu and dpre of sample t of member m into ws, and dh = carry + the gradient reaching h_t
// through the prior and the head. Ends with a team barrier.
template <class TeamMember, class Real, class Mem, class Carry, class VecDh>
KOKKOS_INLINE_FUNCTION void sample_backward(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                            const int m, const int t,
                                            const RssmWindow<Real, Mem>& win,
                                            const RssmBpttWorkspace<Real, Mem>& ws,
                                            const BpttLossWeights<Real> c, const Carry& carry,
                                            const VecDh& dh) {
  const Real gt = win.weight(m, t) * c.inv_k;
  const auto dhead = bptt_row(ws.dhead, m, t);
  const auto dmu = bptt_row(ws.dmu, m, t);
  const auto dpre = bptt_row(ws.dpre, m, t);
  head_backward(team, Kokkos::subview(ws.head, m, t, Kokkos::ALL()), win.y(t), gt, dhead);
  team.team_barrier();
  head_input_grads(team, p, m, Kokkos::subview(win.eps, m, t, Kokkos::ALL()),
                   prior_saved_row(ws, m, t), dhead, gt * c.beta, dmu, dpre);
  team.team_barrier();
  prior_backward(team, p, m, dhead, dmu, dpre, carry, dh);
  team.team_barrier();
}

}  // namespace hpt::detail
