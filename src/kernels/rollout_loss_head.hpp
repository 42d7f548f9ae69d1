#pragma once
// The loss head of a rollout step and the path update it drives (docs/method.md#rssm-ensemble):
// (mu_delta, log var_delta) = C [h; s] + d, delta = mu_delta + exp(log var_delta / 2) * eps,
// l <- l + delta, then the loss state and features (rollout_features.hpp). LossHeadStep is the part
// every rollout kernel runs per path once it holds C h; RolloutLossHead forms C h as well, for
// kernels that hold one path's h per team.
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {
namespace detail {

// delta of member m from the loss head sums c0 = C_0 [h; s] and c1 = C_1 [h; s] and the draw eps
// (log var clamped to +-kLogVarLimit).
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION Real loss_delta(const RssmParams<Real, Mem>& p, const int m, const Real c0,
                                       const Real c1, const Real eps) {
  const Real mu = c0 + p.loss_head_b(m, 0);
  const Real log_var =
      math::clamp(c1 + p.loss_head_b(m, 1), Real(-kLogVarLimit), Real(kLogVarLimit));
  return mu + math::exp(Real(0.5) * log_var) * eps;
}

// One path's step from the h-part of its loss head (c0h = C_0 h, c1h = C_1 h), by one team thread:
// its vector lanes reduce C_0 s and C_1 s, then one lane forms delta with the draw eps, advances
// the loss state and the features x, and calls put(state) to write the path's outputs.
struct LossHeadStep {
  template <class Member, class Real, class Mem, class VecS, class Features, class VecX, class Put>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const RssmParams<Real, Mem>& p,
                                            const int m, const Real c0h, const Real c1h,
                                            const VecS& s, const Real eps, LossState<Real>& state,
                                            const Features& features, const VecX& x,
                                            const Put& put) {
    const int H = p.hidden();
    Sum3<Real> cs;  // C_0 s, C_1 s
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, p.stochastic()),
        [&](const int i, Sum3<Real>& a) {
          a.a += p.loss_head_w(m, 0, H + i) * s(i);
          a.b += p.loss_head_w(m, 1, H + i) * s(i);
        },
        cs);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      features.advance(state, loss_delta(p, m, c0h + cs.a, c1h + cs.b, eps), x);
      put(state);
    });
  }
};

// The loss head on [h; s] and the path's step, by one thread of the team (a fixed order, so every
// backend gives the same bits): C_0 h, C_1 h and |h|^2 over its vector lanes, then LossHeadStep
// with the draw draws(S); put(state, |h|^2) writes the path's outputs.
struct RolloutLossHead {
  template <class Member, class Real, class Mem, class VecH, class VecS, class Features, class VecX,
            class Put>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const RssmParams<Real, Mem>& p,
                                            const int m, const VecH& h, const VecS& s,
                                            const RolloutDraws& draws, LossState<Real>& state,
                                            const Features& features, const VecX& x,
                                            const Put& put) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](const int) {
      Sum3<Real> ch;  // C_0 h, C_1 h, |h|^2
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, p.hidden()),
          [&](const int j, Sum3<Real>& a) {
            const Real hj = h(j);
            a.a += p.loss_head_w(m, 0, j) * hj;
            a.b += p.loss_head_w(m, 1, j) * hj;
            a.c += hj * hj;
          },
          ch);
      const Real eps = Real(draws(p.stochastic()));
      LossHeadStep::invoke(team, p, m, ch.a, ch.b, s, eps, state, features, x,
                           [&](const LossState<Real>& st) { put(st, ch.c); });
    });
  }
};

}  // namespace detail
}  // namespace hpt
