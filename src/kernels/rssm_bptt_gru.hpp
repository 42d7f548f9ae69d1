#pragma once
// One GRU step of one ensemble member inside a team, forward keeping the activations the backward
// needs, and its backward (truncated BPTT of the RSSM, kernels/rssm_bptt.hpp, which takes the
// weight gradients out of the step: kernels/rssm_bptt_weight_grads.hpp). Both conventions of
// GruReset, with h' = (1 - z) n + z h for After (nn.GRUCell) and h' = (1 - z) h + z n for Before.
// Every unit is one team thread; its vector lanes split the dot products (as in gru_step.hpp).
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/gru_weights.hpp"

namespace hpt::detail {

// Activations of one member-step: rows (H) of the workspace. hn = U_n h + b_hn (After only).
template <class Vec>
struct GruSaved {
  Vec r, z, n, hn;
};

// Which gates' input sums a pass needs: all three, or (the two passes of reset Before) r alone,
// or z and n.
enum class GruGates { All, Reset, UpdateCandidate };

// The input side of unit j's gates, W_{r,z,n} x + b_i{r,z,n} (a, b, c), from x by the thread's
// vector lanes: the GRU step on its own (the prototype's).
template <class Real, class Mem, class VecX>
struct GruInputOfX {
  GruWeights<Real, Mem> w;
  int m;
  VecX x;

  template <class TeamMember>
  KOKKOS_INLINE_FUNCTION Sum3<Real> operator()(const TeamMember& team, const int j,
                                               const GruGates gates) const {
    const int H = w.hidden();
    const bool r = gates != GruGates::UpdateCandidate, zn = gates != GruGates::Reset;
    Sum3<Real> wx;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, w.input()),
        [&](const int k, Sum3<Real>& acc) {
          if (r) acc.a += w.w_ih(m, j, k) * x(k);
          if (zn) acc.b += w.w_ih(m, H + j, k) * x(k);
          if (zn) acc.c += w.w_ih(m, 2 * H + j, k) * x(k);
        },
        wx);
    wx.a += w.b_ih(m, j);
    wx.b += w.b_ih(m, H + j);
    wx.c += w.b_ih(m, 2 * H + j);
    return wx;
  }
};

// The same sums read from a row (3H) that a time-parallel kernel computed before the recurrence
// (kernels/rssm_bptt_input_projection.hpp).
template <class Vec>
struct GruInputSaved {
  Vec wx;

  template <class TeamMember>
  KOKKOS_INLINE_FUNCTION auto operator()(const TeamMember&, const int j, const GruGates) const {
    const int H = int(wx.extent(0)) / 3;
    Sum3<typename Vec::non_const_value_type> s;
    s.a = wx(j);
    s.b = wx(H + j);
    s.c = wx(2 * H + j);
    return s;
  }
};

// Units [begin, end) of a member's layer: all H of them when one team runs the member's step, a
// block when the step is split across teams (kernels/rssm_bptt_split.hpp).
struct UnitRange {
  int begin, end;
};

// The block b of `size` units of a layer of H.
KOKKOS_INLINE_FUNCTION UnitRange unit_block(const int b, const int size, const int H) {
  return {b * size, b * size + size < H ? b * size + size : H};
}

// Reset After: units' gates and h_next(j), j in units, saving r, z, n and hn. Every unit needs
// only its own rows of U, so blocks of units are independent.
template <class TeamMember, class Real, class Mem, class Input, class VecH, class Vec>
KOKKOS_INLINE_FUNCTION void gru_forward_after(const TeamMember& team,
                                              const GruWeights<Real, Mem>& w, const int m,
                                              const Input& input, const VecH& h_prev,
                                              const Vec& h_next, const GruSaved<Vec>& a,
                                              const UnitRange units) {
  const int H = w.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int j) {
    const Sum3<Real> wx = input(team, j, GruGates::All);
    Sum3<Real> uh;  // U_{r,z,n} h
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int k, Sum3<Real>& acc) {
          acc.a += w.w_hh(m, j, k) * h_prev(k);
          acc.b += w.w_hh(m, H + j, k) * h_prev(k);
          acc.c += w.w_hh(m, 2 * H + j, k) * h_prev(k);
        },
        uh);
    const Real r = math::sigmoid(wx.a + uh.a + w.b_hh(m, j));
    const Real z = math::sigmoid(wx.b + uh.b + w.b_hh(m, H + j));
    const Real hn = uh.c + w.b_hh(m, 2 * H + j);
    const Real n = math::tanh(wx.c + r * hn);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      a.r(j) = r;
      a.z(j) = z;
      a.n(j) = n;
      a.hn(j) = hn;
      h_next(j) = (Real(1) - z) * n + z * h_prev(j);
    });
  });
}

// Reset Before, first pass: the reset gate r(j) of the units, which U_n (r * h) needs whole.
template <class TeamMember, class Real, class Mem, class Input, class VecH, class Vec>
KOKKOS_INLINE_FUNCTION void gru_forward_reset(const TeamMember& team,
                                              const GruWeights<Real, Mem>& w, const int m,
                                              const Input& input, const VecH& h_prev,
                                              const GruSaved<Vec>& a, const UnitRange units) {
  const int H = w.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int j) {
    const Sum3<Real> wx = input(team, j, GruGates::Reset);
    Real uh = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int k, Real& acc) { acc += w.w_hh(m, j, k) * h_prev(k); }, uh);
    const Real r = math::sigmoid(wx.a + uh + w.b_hh(m, j));
    Kokkos::single(Kokkos::PerThread(team), [&]() { a.r(j) = r; });
  });
}

// Reset Before, second pass (every r written): z, n and h_next(j) of the units.
template <class TeamMember, class Real, class Mem, class Input, class VecH, class Vec>
KOKKOS_INLINE_FUNCTION void gru_forward_update(const TeamMember& team,
                                               const GruWeights<Real, Mem>& w, const int m,
                                               const Input& input, const VecH& h_prev,
                                               const Vec& h_next, const GruSaved<Vec>& a,
                                               const UnitRange units) {
  const int H = w.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int j) {
    const Sum3<Real> wx = input(team, j, GruGates::UpdateCandidate);
    Sum3<Real> uh;  // U_z h, U_n (r * h)
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int k, Sum3<Real>& acc) {
          acc.b += w.w_hh(m, H + j, k) * h_prev(k);
          acc.c += w.w_hh(m, 2 * H + j, k) * (a.r(k) * h_prev(k));
        },
        uh);
    const Real z = math::sigmoid(wx.b + uh.b + w.b_hh(m, H + j));
    const Real n = math::tanh(wx.c + uh.c + w.b_hh(m, 2 * H + j));
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      a.z(j) = z;
      a.n(j) = n;
      h_next(j) = (Real(1) - z) * h_prev(j) + z * n;
    });
  });
}

// h_next = GRU_m(h_prev, x) by one team, saving r, z, n (and hn with After), with input(team, j,
// gates) the input side of unit j's gates (GruInputOfX or GruInputSaved). Vectors are
// team-visible.
template <class TeamMember, class Real, class Mem, class Input, class VecH, class Vec>
KOKKOS_INLINE_FUNCTION void gru_forward_saved(const TeamMember& team,
                                              const GruWeights<Real, Mem>& w, const int m,
                                              const GruReset reset, const Input& input,
                                              const VecH& h_prev, const Vec& h_next,
                                              const GruSaved<Vec>& a) {
  const UnitRange all{0, w.hidden()};
  if (reset == GruReset::After) {
    gru_forward_after(team, w, m, input, h_prev, h_next, a, all);
    return;
  }
  gru_forward_reset(team, w, m, input, h_prev, a, all);
  team.team_barrier();
  gru_forward_update(team, w, m, input, h_prev, h_next, a, all);
}

// Team-visible work vectors of the GRU backward: dgate (3H) holds da_r, da_z, da_n (gradients of
// the gate pre-activations); dhn (H) the gradient of U_n h + b_hn (After).
template <class Vec>
struct GruBackwardWork {
  Vec dgate, dhn;
};

// Accumulates the weight gradients of one step into the row q of every gate block: dW_ih(q) += gi x
// and dW_hh(q) += gh v, where v is h_prev, or r * h_prev for the candidate block with Before.
template <class TeamMember, class Real, class Mem, class VecX, class VecH, class VecA, class VecD>
KOKKOS_INLINE_FUNCTION void gru_weight_grads(const TeamMember& team, const GruWeights<Real, Mem>& g,
                                             const int m, const GruReset reset, const VecX& x,
                                             const VecH& h_prev, const GruSaved<VecA>& a,
                                             const GruBackwardWork<VecD>& work) {
  const int H = g.hidden();
  const int I = g.input();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3 * H), [&](const int q) {
    const bool candidate = q >= 2 * H;
    const Real gi = work.dgate(q);
    const Real gh = (candidate && reset == GruReset::After) ? work.dhn(q - 2 * H) : gi;
    const bool gated_h = candidate && reset == GruReset::Before;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, I),
                         [&](const int k) { g.w_ih(m, q, k) += gi * x(k); });
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, H), [&](const int k) {
      g.w_hh(m, q, k) += gh * (gated_h ? a.r(k) * h_prev(k) : h_prev(k));
    });
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      g.b_ih(m, q) += gi;
      g.b_hh(m, q) += gh;
    });
  });
}

// carry(k) += sum_j U(j, k) d_j, k in units, over the blocks whose recurrent input is h itself: r,
// z and, with After, n (through dhn).
template <class TeamMember, class Real, class Mem, class Vec>
KOKKOS_INLINE_FUNCTION void gru_recurrent_grad(const TeamMember& team,
                                               const GruWeights<Real, Mem>& w, const int m,
                                               const GruReset reset,
                                               const GruBackwardWork<Vec>& work, const Vec& carry,
                                               const UnitRange units) {
  const int H = w.hidden();
  const bool after = reset == GruReset::After;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int k) {
    Real sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int j, Real& acc) {
          acc += w.w_hh(m, j, k) * work.dgate(j) + w.w_hh(m, H + j, k) * work.dgate(H + j);
          if (after) acc += w.w_hh(m, 2 * H + j, k) * work.dhn(j);
        },
        sum);
    Kokkos::single(Kokkos::PerThread(team), [&]() { carry(k) += sum; });
  });
}

// Unit j's part of the gate gradients given dh = dL/dh_next(j): da_z, da_n (and, with After,
// da_r and dhn) into work, and carry(j) = dL/dh_prev(j) through the direct path.
template <class Real, class VecH, class VecA, class VecW, class VecC>
KOKKOS_INLINE_FUNCTION void gru_unit_grads(const GruReset reset, const int j, const Real dh,
                                           const VecH& h_prev, const GruSaved<VecA>& a,
                                           const GruBackwardWork<VecW>& work, const VecC& carry) {
  const int H = int(h_prev.extent(0));
  const bool after = reset == GruReset::After;
  const Real z = a.z(j), n = a.n(j);
  const Real dn = after ? dh * (Real(1) - z) : dh * z;
  const Real dz = after ? dh * (h_prev(j) - n) : dh * (n - h_prev(j));
  const Real dan = dn * (Real(1) - n * n);
  work.dgate(H + j) = dz * z * (Real(1) - z);
  work.dgate(2 * H + j) = dan;
  carry(j) = after ? dh * z : dh * (Real(1) - z);
  if (after) {  // a_n = ... + r * hn
    const Real r = a.r(j);
    work.dhn(j) = dan * r;
    work.dgate(j) = dan * a.hn(j) * r * (Real(1) - r);
  }
}

// gru_unit_grads for every unit of units, with dh(j) a callable (a view, or a sum the caller
// forms).
template <class TeamMember, class DH, class VecH, class VecA, class VecW, class VecC>
KOKKOS_INLINE_FUNCTION void gru_pointwise_grads(const TeamMember& team, const GruReset reset,
                                                const DH& dh, const VecH& h_prev,
                                                const GruSaved<VecA>& a,
                                                const GruBackwardWork<VecW>& work,
                                                const VecC& carry, const UnitRange units) {
  using Real = typename VecW::non_const_value_type;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int j) {
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      const Real d = dh(j);  // read before carry(j) is written: dh may be formed from it
      gru_unit_grads(reset, j, d, h_prev, a, work, carry);
    });
  });
}

// Reset Before (every da_n written): the reset gate's gradient through U_n (r * h),
// d(r * h)_k = sum_j U_n(j, k) da_n(j), into da_r(k) and carry(k), k in units.
template <class TeamMember, class Real, class Mem, class VecH, class VecA, class VecW, class VecC>
KOKKOS_INLINE_FUNCTION void gru_reset_grads(const TeamMember& team, const GruWeights<Real, Mem>& w,
                                            const int m, const VecH& h_prev,
                                            const GruSaved<VecA>& a,
                                            const GruBackwardWork<VecW>& work, const VecC& carry,
                                            const UnitRange units) {
  const int H = w.hidden();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, units.begin, units.end), [&](const int k) {
    Real drh = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int j, Real& acc) { acc += w.w_hh(m, 2 * H + j, k) * work.dgate(2 * H + j); },
        drh);
    Kokkos::single(Kokkos::PerThread(team), [&]() {
      const Real r = a.r(k);
      work.dgate(k) = drh * h_prev(k) * r * (Real(1) - r);
      carry(k) += drh * r;
    });
  });
}

// The gate pre-activation gradients of one step by one team given dh = dL/dh_next: work.dgate =
// (da_r, da_z, da_n), work.dhn (After), and carry = dL/dh_prev through every path but the
// recurrent products (gru_recurrent_grad adds those). Needs the activations gru_forward_saved
// kept. The caller puts a team barrier before (dh written); this ends with one (work and carry
// written).
template <class TeamMember, class Real, class Mem, class VecH, class VecA, class VecD, class VecW,
          class VecC>
KOKKOS_INLINE_FUNCTION void gru_gate_grads(const TeamMember& team, const GruWeights<Real, Mem>& w,
                                           const int m, const GruReset reset, const VecH& h_prev,
                                           const GruSaved<VecA>& a, const VecD& dh,
                                           const GruBackwardWork<VecW>& work, const VecC& carry) {
  const UnitRange all{0, w.hidden()};
  gru_pointwise_grads(team, reset, dh, h_prev, a, work, carry, all);
  team.team_barrier();
  if (reset == GruReset::After) return;
  gru_reset_grads(team, w, m, h_prev, a, work, carry, all);
  team.team_barrier();
}

// Backward of h_next = GRU_m(h_prev, x) given dh = dL/dh_next for one step on its own (the
// prototype's): accumulates the gradients of every GRU tensor of member m into g, and writes
// carry = dL/dh_prev (through this step only) when want_dh_prev. Needs the activations
// gru_forward_saved kept. The caller puts a team barrier before (dh written) and after (carry
// read).
template <class TeamMember, class Real, class Mem, class VecX, class VecH, class VecA, class VecD>
KOKKOS_INLINE_FUNCTION void gru_backward(const TeamMember& team, const GruWeights<Real, Mem>& w,
                                         const GruWeights<Real, Mem>& g, const int m,
                                         const GruReset reset, const VecX& x, const VecH& h_prev,
                                         const GruSaved<VecA>& a, const VecD& dh,
                                         const GruBackwardWork<VecD>& work, const VecD& carry,
                                         const bool want_dh_prev) {
  gru_gate_grads(team, w, m, reset, h_prev, a, dh, work, carry);
  gru_weight_grads(team, g, m, reset, x, h_prev, a, work);
  if (want_dh_prev) gru_recurrent_grad(team, w, m, reset, work, carry, UnitRange{0, w.hidden()});
}

}  // namespace hpt::detail
