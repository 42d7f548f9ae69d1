#pragma once
// The prior over the stochastic state s of a rollout step and its sample
// (docs/method.md#rssm-ensemble): s_i = mu_s + sigma_s * eps_i with mu_s = A_i h + a_i and sigma_s
// = softplus(B_i h + b_i) + floor. prior_sample turns the sums A_i h and B_i h into s_i in every
// rollout kernel; RolloutPrior forms the sums as well, for kernels that hold one path's h per team.
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "core/math_vectorizable.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {
namespace detail {

// s_i of member m from the prior sums ah = A_i h and bh = B_i h and the draw eps. Vectorizable:
// softplus by core/math_vectorizable.hpp (within 2 ulp of the library's), for a host loop over i.
template <bool Vectorizable = false, class Real, class Mem>
KOKKOS_INLINE_FUNCTION Real prior_sample(const RssmParams<Real, Mem>& p, const int m, const int i,
                                         const Real ah, const Real bh, const Real eps) {
  const Real mu = ah + p.prior_mean_b(m, i);
  const Real pre = bh + p.prior_scale_b(m, i);
  const Real soft = Vectorizable ? math::softplus_vectorizable(pre) : math::softplus(pre);
  return mu + (soft + Real(kPriorScaleFloor)) * eps;
}

// s (S) from h (H) of one path, by the whole team: unit i's sums by one team thread (its vector
// lanes split them over h), its draw draws(i). h and s are team-visible; the caller puts a team
// barrier before reading s.
struct RolloutPrior {
  template <class Member, class Real, class Mem, class VecH, class VecS>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const RssmParams<Real, Mem>& p,
                                            const int m, const VecH& h, const RolloutDraws& draws,
                                            const VecS& s) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p.stochastic()), [&](const int i) {
      Sum3<Real> acc;  // A_i h, B_i h
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, p.hidden()),
          [&](const int j, Sum3<Real>& a) {
            a.a += p.prior_mean_w(m, i, j) * h(j);
            a.b += p.prior_scale_w(m, i, j) * h(j);
          },
          acc);
      const Real si = prior_sample(p, m, i, acc.a, acc.b, Real(draws(i)));
      Kokkos::single(Kokkos::PerThread(team), [&]() { s(i) = si; });
    });
  }
};

}  // namespace detail
}  // namespace hpt
