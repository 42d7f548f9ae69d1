#pragma once
// The prior and the loss head of one RSSM member-step inside a team, forward (with the training
// loss of the step) and backward (kernels/rssm_bptt.hpp):
//   mu_s = A h + a, sigma_s = softplus(B h + b) + kPriorScaleFloor, s = mu_s + sigma_s * eps,
//   (mu_delta, l) = C [h; s] + d, l clamped to +-kLogVarLimit,
//   loss = g * (NLL + beta * KL), NLL = (l + (y - mu_delta)^2 e^-l) / 2,
//   KL = sum_i (sigma_i^2 + mu_i^2 - 1) / 2 - log sigma_i  (N(mu_s, sigma_s^2) against N(0, I)).
// The backward gives the pre-activation gradients and dL/dh only: the weight and bias gradients are
// their sums over the window (kernels/rssm_bptt_weight_grads.hpp).
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt::detail {

// Activations of the prior of one member-step: rows (S) of the workspace; pre = B h + b.
template <class Vec>
struct PriorSaved {
  Vec mu, pre, s;
};

template <class Real>
KOKKOS_INLINE_FUNCTION Real prior_scale(const Real pre) {
  return math::softplus(pre) + Real(kPriorScaleFloor);
}

// mu_s, B h + b and the sample s = mu_s + sigma_s * eps from h (H); eps (S).
template <class TeamMember, class Real, class Mem, class VecH, class VecE, class Vec>
KOKKOS_INLINE_FUNCTION void prior_forward(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                          const int m, const VecH& h, const VecE& eps,
                                          const PriorSaved<Vec>& a) {
  const int H = p.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p.stochastic()), [&](const int i) {
    Sum3<Real> acc;  // A_i h, B_i h
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int j, Sum3<Real>& s) {
          s.a += p.prior_mean_w(m, i, j) * h(j);
          s.b += p.prior_scale_w(m, i, j) * h(j);
        },
        acc);
    const Real mu = acc.a + p.prior_mean_b(m, i);
    const Real pre = acc.b + p.prior_scale_b(m, i);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      a.mu(i) = mu;
      a.pre(i) = pre;
      a.s(i) = mu + prior_scale(pre) * eps(i);
    });
  });
}

// Writes head(0) = mu_delta, head(1) = the unclamped log variance, and step_loss() = the step's
// weighted loss g * (NLL + beta * KL) for the target y.
template <class TeamMember, class Real, class Mem, class VecH, class Vec, class VecHead,
          class Scalar>
KOKKOS_INLINE_FUNCTION void head_forward(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                         const int m, const VecH& h, const PriorSaved<Vec>& a,
                                         const Real y, const Real g, const Real beta,
                                         const VecHead& head, const Scalar& step_loss) {
  const int H = p.hidden();
  const int S = p.stochastic();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 1), [&](const int) {
    Sum3<Real> ch, cs;  // C_0 h, C_1 h; C_0 s, C_1 s, KL
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int j, Sum3<Real>& acc) {
          acc.a += p.loss_head_w(m, 0, j) * h(j);
          acc.b += p.loss_head_w(m, 1, j) * h(j);
        },
        ch);
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, S),
        [&](const int i, Sum3<Real>& acc) {
          const Real sigma = prior_scale(a.pre(i));
          acc.a += p.loss_head_w(m, 0, H + i) * a.s(i);
          acc.b += p.loss_head_w(m, 1, H + i) * a.s(i);
          acc.c += Real(0.5) * (sigma * sigma + a.mu(i) * a.mu(i) - Real(1)) - math::log(sigma);
        },
        cs);
    const Real mu = ch.a + cs.a + p.loss_head_b(m, 0);
    const Real raw = ch.b + cs.b + p.loss_head_b(m, 1);
    const Real l = math::clamp(raw, Real(-kLogVarLimit), Real(kLogVarLimit));
    const Real r = y - mu;
    const Real nll = Real(0.5) * (l + r * r * math::exp(-l));
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      head(0) = mu;
      head(1) = raw;
      step_loss() = g * (nll + beta * cs.c);
    });
  });
}

// dhead = (dL/dmu_delta, dL/dl) of the step's loss g * NLL (zero for l outside the clamp).
template <class TeamMember, class Real, class VecHead, class VecD>
KOKKOS_INLINE_FUNCTION void head_backward(const TeamMember& team, const VecHead& head, const Real y,
                                          const Real g, const VecD& dhead) {
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    const Real raw = head(1);
    const bool inside = raw >= Real(-kLogVarLimit) && raw <= Real(kLogVarLimit);
    const Real l = math::clamp(raw, Real(-kLogVarLimit), Real(kLogVarLimit));
    const Real e = math::exp(-l);
    const Real r = y - head(0);
    dhead(0) = -g * r * e;
    dhead(1) = inside ? g * Real(0.5) * (Real(1) - r * r * e) : Real(0);
  });
}

// The prior's pre-activation gradients dmu (S) = dL/dmu_s and dpre (S) = dL/d(B h + b) through
// s and the KL (weight g * beta).
template <class TeamMember, class Real, class Mem, class VecE, class Vec, class VecHead, class VecD>
KOKKOS_INLINE_FUNCTION void head_input_grads(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                             const int m, const VecE& eps, const PriorSaved<Vec>& a,
                                             const VecHead& dhead, const Real g_beta,
                                             const VecD& dmu, const VecD& dpre) {
  const int H = p.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p.stochastic()), [&](const int i) {
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      const int q = H + i;
      const Real ds = p.loss_head_w(m, 0, q) * dhead(0) + p.loss_head_w(m, 1, q) * dhead(1);
      const Real sigma = prior_scale(a.pre(i));
      const Real dsigma = ds * eps(i) + g_beta * (sigma - Real(1) / sigma);
      dmu(i) = ds + g_beta * a.mu(i);
      dpre(i) = dsigma * math::sigmoid(a.pre(i));  // softplus' = sigmoid
    });
  });
}

// dh = carry + C_h^T dhead + A^T dmu + B^T dpre: the total gradient reaching h of this step.
// carry is a callable (a view, or zero).
template <class TeamMember, class Real, class Mem, class VecHead, class VecD, class Carry,
          class VecC>
KOKKOS_INLINE_FUNCTION void prior_backward(const TeamMember& team, const RssmParams<Real, Mem>& p,
                                           const int m, const VecHead& dhead, const VecD& dmu,
                                           const VecD& dpre, const Carry& carry, const VecC& dh) {
  const int H = p.hidden();
  const int S = p.stochastic();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int j) {
    Real sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, S),
        [&](const int i, Real& acc) {
          acc += p.prior_mean_w(m, i, j) * dmu(i) + p.prior_scale_w(m, i, j) * dpre(i);
        },
        sum);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      dh(j) =
          carry(j) + p.loss_head_w(m, 0, j) * dhead(0) + p.loss_head_w(m, 1, j) * dhead(1) + sum;
    });
  });
}

}  // namespace hpt::detail
