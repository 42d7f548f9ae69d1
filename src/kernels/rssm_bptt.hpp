#pragma once
// Truncated BPTT of the RSSM ensemble over a window of K training samples.
// Sample t: h_t = GRU(h_{t-1}, x_t) with h_{-1} = h0 (a constant), s_t from the prior of h_t, and
// the loss head on [h_t; s_t] predicting y_t = log L_{t+1} - log L_t. Loss of member m:
//   L_m = sum_t w_{m,t} (NLL_t + beta KL_t) / K   (kernels/rssm_bptt_heads.hpp for the terms).
// The forward keeps the activations in a workspace (kernels/rssm_bptt_workspace.hpp); the backward
// writes dL_m/dtheta_m of every tensor into a gradient buffer of the parameters' layout. The
// recurrence makes the forward and the backward sweep sequential over the samples: one team per
// member runs them, or (kernels/rssm_bptt_split.hpp, chosen by bptt_uses_split) each member's step
// is split across teams with a launch per sample. The input products W_ih x_t of all samples are
// one batched kernel before the forward's recurrence (kernels/rssm_bptt_input_projection.hpp);
// the backward sweep only stores the pre-activation gradients of every sample and carries dL/dh
// back, and the weight gradients, two thirds of the backward's FLOPs, are then one batched
// reduction over the window with a team per member and tensor row
// (kernels/rssm_bptt_weight_grads.hpp). Nothing is allocated in the launchers.
#include <Kokkos_Core.hpp>
#include <string>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/rssm_bptt_gru.hpp"
#include "kernels/rssm_bptt_heads.hpp"
#include "kernels/rssm_bptt_input_projection.hpp"
#include "kernels/rssm_bptt_sample.hpp"
#include "kernels/rssm_bptt_split.hpp"
#include "kernels/rssm_bptt_split_backward.hpp"
#include "kernels/rssm_bptt_split_forward.hpp"
#include "kernels/rssm_bptt_weight_grads.hpp"
#include "kernels/rssm_bptt_workspace.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {

// The model's FLOPs of one forward and backward over a full window of K samples of E members:
// the forward of a member-sample is the rollout's 6 H (H + I) + 4 S H + 4 (H + S) (the GRU, the
// prior's two products, the loss head), two per weight; the backward does two products of the same
// size per forward product (the input gradient W^T d and the weight gradient d x^T), so the whole
// counts three forwards. Elementwise work (gates, KL, NLL) is not counted (docs/bench.md).
inline double rssm_bptt_flops(int members, int hidden, int stochastic, int input, int window) {
  const double H = hidden, S = stochastic;
  const double forward = gru_step_flops(hidden, input) + 4.0 * S * H + 4.0 * (H + S);
  return 3.0 * forward * double(members) * double(window);
}

namespace detail {

// The shape checks both launchers share.
template <class Real, class Mem>
void check_bptt_arguments(const RssmParams<Real, Mem>& p, const RssmWindow<Real, Mem>& window,
                          const RssmBpttWorkspace<Real, Mem>& ws, const char* who) {
  const int E = p.members(), H = p.hidden(), S = p.stochastic(), I = p.input();
  const int K = window.capacity();
  const std::string name(who);
  HPT_REQUIRE(window.steps >= 0 && window.steps <= K, name + ": window steps out of range");
  HPT_REQUIRE(int(window.x.extent(1)) == I && int(window.y.extent(0)) == K,
              name + ": window x must be (K, I) and y (K)");
  HPT_REQUIRE(int(window.h0.extent(0)) == E && int(window.h0.extent(1)) == H,
              name + ": window h0 must be (E, H)");
  HPT_REQUIRE(int(window.weight.extent(0)) == E && int(window.weight.extent(1)) == K,
              name + ": window weight must be (E, K)");
  HPT_REQUIRE(int(window.eps.extent(0)) == E && int(window.eps.extent(1)) == K &&
                  int(window.eps.extent(2)) == S,
              name + ": window eps must be (E, K, S)");
  HPT_REQUIRE(int(ws.h.extent(0)) == E && ws.capacity() == K && int(ws.h.extent(2)) == H &&
                  int(ws.mu.extent(2)) == S,
              name + ": workspace sizes differ from the parameters and the window");
}

// The forward after the input products, one team per member.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_team_forward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const RssmWindow<Real, typename Space::memory_space>& window,
    const BpttLossWeights<Real> c, const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const View1<Real, typename Space::memory_space>& loss) {
  const int H = params.hidden();
  const int steps = window.steps;
  const RssmParams<Real, typename Space::memory_space> p = params;
  const RssmWindow<Real, typename Space::memory_space> win = window;
  const RssmBpttWorkspace<Real, typename Space::memory_space> w = ws;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Row = BpttRow<Real, typename Space::memory_space>;

  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H),
                         [&](const int j) { w.h(m, 0, j) = win.h0(m, j); });
    team.team_barrier();
    for (int t = 0; t < steps; ++t) {
      const GruInputSaved<Row> x{bptt_row(w.wx, m, t)};
      const auto h_prev = Kokkos::subview(w.h, m, t, Kokkos::ALL());
      const Row h = Kokkos::subview(w.h, m, t + 1, Kokkos::ALL());
      gru_forward_saved(team, p.gru, m, reset, x, h_prev, h, gru_saved_row(w, m, t));
      team.team_barrier();
      sample_forward(team, p, m, t, win, w, c);
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { loss(m) = w.window_loss(m, steps); });
  };
  const auto policy = make_team_policy(space, params.members(), 0, 0, body, 0);
  Kokkos::parallel_for("hpt::rssm_bptt_forward", policy, body);
}

// The backward sweep, one team per member: per-sample gradients into ws, dL/dh carried back.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_team_backward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GruReset reset, const RssmWindow<Real, typename Space::memory_space>& window,
    const BpttLossWeights<Real> c,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws) {
  const int steps = window.steps;
  const RssmParams<Real, typename Space::memory_space> p = params;
  const RssmWindow<Real, typename Space::memory_space> win = window;
  const RssmBpttWorkspace<Real, typename Space::memory_space> w = ws;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Row = BpttRow<Real, typename Space::memory_space>;

  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int m = team.league_rank();
    const Row carry = Kokkos::subview(w.carry, m, Kokkos::ALL());
    const Row dh = Kokkos::subview(w.dh, m, Kokkos::ALL());
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, int(carry.extent(0))),
                         [&](const int j) { carry(j) = Real(0); });
    team.team_barrier();
    for (int t = steps - 1; t >= 0; --t) {
      const GruBackwardWork<Row> work{bptt_row(w.dgate, m, t), bptt_row(w.dhn, m, t)};
      sample_backward(team, p, m, t, win, w, c, carry, dh);
      gru_gate_grads(team, p.gru, m, reset, Kokkos::subview(w.h, m, t, Kokkos::ALL()),
                     gru_saved_row(w, m, t), dh, work, carry);
      if (t > 0) gru_recurrent_grad(team, p.gru, m, reset, work, carry, UnitRange{0, p.hidden()});
      team.team_barrier();
    }
  };
  const auto policy = make_team_policy(space, params.members(), 0, 0, body, 0);
  Kokkos::parallel_for("hpt::rssm_bptt_backward", policy, body);
}

}  // namespace detail

// loss(m) = L_m of the window; keeps the activations in ws for rssm_bptt_backward (both ways of
// running the recurrence keep the same ones).
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_forward(const Space& space,
                                    const RssmParams<Real, typename Space::memory_space>& params,
                                    const GruReset reset,
                                    const RssmWindow<Real, typename Space::memory_space>& window,
                                    const double kl_weight,
                                    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
                                    const View1<Real, typename Space::memory_space>& loss,
                                    const BpttRecurrence recurrence = BpttRecurrence::Auto) {
  detail::check_bptt_arguments(params, window, ws, "rssm_bptt_forward");
  HPT_REQUIRE(int(loss.extent(0)) == params.members(), "rssm_bptt_forward: loss must be (E)");
  const detail::BpttLossWeights<Real> c{Real(1) / Real(window.capacity()), Real(kl_weight)};
  detail::rssm_bptt_input_projection(space, params.gru, window, ws);
  if (bptt_uses_split<Space>(recurrence, params.hidden()))
    detail::rssm_bptt_split_forward(space, params, reset, window, c, ws, loss);
  else
    detail::rssm_bptt_team_forward(space, params, reset, window, c, ws, loss);
}

// grad <- dL_m/dtheta_m for every member (overwritten), from the activations rssm_bptt_forward
// kept in ws for the same parameters, window and kl_weight.
template <class Space, class Real>
HPT_LAUNCHER void rssm_bptt_backward(
    const Space& space, const RssmParams<Real, typename Space::memory_space>& params,
    const GradRssm<Real, typename Space::memory_space>& grad, const GruReset reset,
    const RssmWindow<Real, typename Space::memory_space>& window, const double kl_weight,
    const RssmBpttWorkspace<Real, typename Space::memory_space>& ws,
    const BpttRecurrence recurrence = BpttRecurrence::Auto) {
  detail::check_bptt_arguments(params, window, ws, "rssm_bptt_backward");
  HPT_REQUIRE(grad.members() == params.members() && grad.hidden() == params.hidden() &&
                  grad.stochastic() == params.stochastic() && grad.input() == params.input(),
              "rssm_bptt_backward: gradient and parameter shapes differ");
  const detail::BpttLossWeights<Real> c{Real(1) / Real(window.capacity()), Real(kl_weight)};
  if (bptt_uses_split<Space>(recurrence, params.hidden()))
    detail::rssm_bptt_split_backward(space, params, reset, window, c, ws);
  else
    detail::rssm_bptt_team_backward(space, params, reset, window, c, ws);
  detail::rssm_bptt_weight_grads(space, grad, reset, window, ws);
}

}  // namespace hpt
