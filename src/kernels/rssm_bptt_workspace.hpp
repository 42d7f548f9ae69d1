#pragma once
// The training window of the RSSM's truncated BPTT (kernels/rssm_bptt.hpp) and the workspace of
// its kernels: the forward's activations, the per-sample pre-activation gradients the sequential
// backward sweep stores, and the sweep's work vectors. Allocated once, by the caller.
#include <Kokkos_Core.hpp>

#include "core/types.hpp"
#include "kernels/rssm_bptt_gru.hpp"
#include "kernels/rssm_bptt_heads.hpp"

namespace hpt {

// One training window. Capacity K = x.extent(0); the first `steps` samples are used.
template <class Real, class Mem = MemSpace>
struct RssmWindow {
  View2<Real, Mem> x;       // (K, I) normalised features x_t
  View1<Real, Mem> y;       // (K) targets log L_{t+1} - log L_t
  View2<Real, Mem> h0;      // (E, H) every member's latent before the first sample
  View2<Real, Mem> weight;  // (E, K) bagging weights w_{m,t}
  View3<Real, Mem> eps;     // (E, K, S) standard normal noise of the prior samples
  int steps = 0;

  RssmWindow() = default;
  RssmWindow(int members, int hidden, int stochastic, int input, int capacity)
      : x("rssm.window.x", capacity, input),
        y("rssm.window.y", capacity),
        h0("rssm.window.h0", members, hidden),
        weight("rssm.window.weight", members, capacity),
        eps("rssm.window.eps", members, capacity, stochastic) {}

  int capacity() const { return int(x.extent(0)); }
};

// Activations of the forward (per member and sample; the gates' input sums first), the backward
// sweep's per-sample gradients (the D of the weight gradients D^T X,
// kernels/rssm_bptt_weight_grads.hpp) and its work vectors (the split sweep's too,
// kernels/rssm_bptt_split.hpp).
template <class Real, class Mem = MemSpace>
struct RssmBpttWorkspace {
  View3<Real, Mem> wx;           // (E, K, 3H) W_ih x_t + b_ih, before the recurrence
  View3<Real, Mem> h;            // (E, K+1, H): h(m, 0) = h0, h(m, t+1) = h_t
  View3<Real, Mem> r, z, n, hn;  // (E, K, H) gates; hn = U_n h + b_hn (reset After)
  View3<Real, Mem> mu, pre, s;   // (E, K, S) prior mean, B h + b, sample
  View3<Real, Mem> head;         // (E, K, 2) mu_delta, unclamped log variance
  View2<Real, Mem> step_loss;    // (E, K) weighted loss of every sample
  View3<Real, Mem> dgate;        // (E, K, 3H) da_r, da_z, da_n
  View3<Real, Mem> dhn;          // (E, K, H) d(U_n h + b_hn) (After)
  View3<Real, Mem> dmu, dpre;    // (E, K, S) dL/dmu_s, dL/d(B h + b)
  View3<Real, Mem> dhead;        // (E, K, 2) dL/dmu_delta, dL/dl
  View3<Real, Mem> dh_heads;     // (E, K, H) dL/dh_t through the prior and head (split sweep)
  View2<Real, Mem> dh, carry;    // (E, H)

  RssmBpttWorkspace() = default;
  RssmBpttWorkspace(int E, int H, int S, int K)
      : wx("rssm.bptt.wx", E, K, 3 * H),
        h("rssm.bptt.h", E, K + 1, H),
        r("rssm.bptt.r", E, K, H),
        z("rssm.bptt.z", E, K, H),
        n("rssm.bptt.n", E, K, H),
        hn("rssm.bptt.hn", E, K, H),
        mu("rssm.bptt.mu", E, K, S),
        pre("rssm.bptt.pre", E, K, S),
        s("rssm.bptt.s", E, K, S),
        head("rssm.bptt.head", E, K, 2),
        step_loss("rssm.bptt.step_loss", E, K),
        dgate("rssm.bptt.dgate", E, K, 3 * H),
        dhn("rssm.bptt.dhn", E, K, H),
        dmu("rssm.bptt.dmu", E, K, S),
        dpre("rssm.bptt.dpre", E, K, S),
        dhead("rssm.bptt.dhead", E, K, 2),
        dh_heads("rssm.bptt.dh_heads", E, K, H),
        dh("rssm.bptt.dh", E, H),
        carry("rssm.bptt.carry", E, H) {}

  int capacity() const { return int(r.extent(1)); }
  // Member m's loss over the first `steps` samples, summed in sample order by one thread (so it
  // depends neither on the team size nor on how the recurrence ran).
  KOKKOS_INLINE_FUNCTION Real window_loss(const int m, const int steps) const {
    Real sum = 0;
    for (int t = 0; t < steps; ++t) sum += step_loss(m, t);
    return sum;
  }
};

namespace detail {

template <class Real, class Mem>
using BpttRow = Kokkos::View<Real*, Kokkos::LayoutRight, Mem>;

// Row (m, t) of an (E, K, n) workspace tensor.
template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION BpttRow<Real, Mem> bptt_row(const View3<Real, Mem>& v, const int m,
                                                   const int t) {
  return Kokkos::subview(v, m, t, Kokkos::ALL());
}

template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION GruSaved<BpttRow<Real, Mem>> gru_saved_row(
    const RssmBpttWorkspace<Real, Mem>& ws, const int m, const int t) {
  return {bptt_row(ws.r, m, t), bptt_row(ws.z, m, t), bptt_row(ws.n, m, t), bptt_row(ws.hn, m, t)};
}

template <class Real, class Mem>
KOKKOS_INLINE_FUNCTION PriorSaved<BpttRow<Real, Mem>> prior_saved_row(
    const RssmBpttWorkspace<Real, Mem>& ws, const int m, const int t) {
  return {bptt_row(ws.mu, m, t), bptt_row(ws.pre, m, t), bptt_row(ws.s, m, t)};
}

}  // namespace detail
}  // namespace hpt
