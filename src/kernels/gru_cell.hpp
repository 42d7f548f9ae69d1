#pragma once
// The GRU cell (docs/method.md#gru-cell) as team-level routines that the GRU step and the rollout
// kernels compose: the gate nonlinearity and h update of both conventions, the gate sums of one
// unit, and the cell over a range of units. The weights come through a row source, so the same
// routine reads them from global memory (GruGlobalRows) or from a team's scratch
// (ensemble_rollout_persistent.hpp); the kernels differ only in how units map to teams and where
// the rows live.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include "core/math.hpp"
#include "core/math_vectorizable.hpp"
#include "kernels/gru_weights.hpp"

namespace hpt {
namespace detail {

// Three sums reduced together, so one pass over a block of weight rows feeds three gates.
template <class Real>
struct Sum3 {
  Real a, b, c;
  KOKKOS_INLINE_FUNCTION Sum3() : a(0), b(0), c(0) {}
  KOKKOS_INLINE_FUNCTION Sum3& operator+=(const Sum3& o) {
    a += o.a;
    b += o.b;
    c += o.c;
    return *this;
  }
};

// h' of one unit with PyTorch's convention (GruReset::After) from the gate pre-activations:
// r = sigmoid(pre_r), z = sigmoid(pre_z), n = tanh(xn + r * hn) with xn = W_n x + b_in and
// hn = U_n h + b_hn; z keeps the old state, h' = (1 - z) n + z h. Vectorizable: the branch-free
// sigmoid and tanh of core/math_vectorizable.hpp, for a loop over units the host compiler
// vectorises (within 2e-7 in float of the library's).
template <class Real, bool Vectorizable = false>
KOKKOS_INLINE_FUNCTION Real gru_update_after(const Real pre_r, const Real pre_z, const Real xn,
                                             const Real hn, const Real h) {
  const Real r = Vectorizable ? math::sigmoid_vectorizable(pre_r) : math::sigmoid(pre_r);
  const Real z = Vectorizable ? math::sigmoid_vectorizable(pre_z) : math::sigmoid(pre_z);
  const Real a = xn + r * hn;
  const Real n = Vectorizable ? math::tanh_vectorizable(a) : math::tanh(a);
  return (Real(1) - z) * n + z * h;
}

// h' of one unit with the prototype's convention (GruReset::Before) from z and the candidate's
// pre-activation pre_n = W_n x + U_n (r * h) + b_in + b_hn: z takes the candidate,
// h' = (1 - z) h + z n.
template <class Real>
KOKKOS_INLINE_FUNCTION Real gru_update_before(const Real z, const Real pre_n, const Real h) {
  const Real n = math::tanh(pre_n);
  return (Real(1) - z) * h + z * n;
}

// One GRU weight row held as pointers (a team's scratch copy, or the weights in place): its input
// part x (I values) and its recurrent part h (H values); `streamed`: a row in global memory read
// with streaming loads (recurrent_sums), so that it does not evict rows that stay in L2 (the rows
// of one unit, read together, are streamed alike).
template <class Real>
struct WeightRow {
  const Real* xp;
  const Real* hp;
  bool streamed = false;
  KOKKOS_INLINE_FUNCTION Real x(const int k) const { return xp[k]; }
  KOKKOS_INLINE_FUNCTION Real h(const int k) const { return hp[k]; }
};

// Whether a row source's rows are WeightRows (pointers that recurrent_sums may read four values at
// a time).
template <class Row>
struct IsWeightRow : std::false_type {};
template <class Real>
struct IsWeightRow<WeightRow<Real>> : std::true_type {};

// Four consecutive values of a row, read as one access (a 16-byte load in float on a GPU).
template <class Real>
struct alignas(4 * sizeof(Real)) Quad {
  Real v[4];
};

template <class Real>
KOKKOS_INLINE_FUNCTION bool quad_aligned(const Real* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(Quad<Real>) == 0;
}

// The Quad at p (aligned). Streamed, and p in global memory: on a CUDA device in float a streaming
// load (evicted first from L1 and L2), elsewhere an ordinary one.
template <bool Streamed, class Real>
KOKKOS_INLINE_FUNCTION Quad<Real> load_quad(const Real* p) {
#if defined(__CUDA_ARCH__)
  if constexpr (Streamed && std::is_same<Real, float>::value) {
    const float4 v = __ldcs(reinterpret_cast<const float4*>(p));
    return {{v.x, v.y, v.z, v.w}};
  }
#endif
  return *reinterpret_cast<const Quad<Real>*>(p);
}

// recurrent_sums' Quad reads (the rows aligned, H a multiple of four), with streaming loads or not.
template <bool Streamed, int Count, class Member, class Real, class VecH>
KOKKOS_INLINE_FUNCTION Sum3<Real> recurrent_sums_by_quads(const Member& team,
                                                          const WeightRow<Real>& ra,
                                                          const WeightRow<Real>& rb,
                                                          const WeightRow<Real>& rc, const VecH& h,
                                                          const int H) {
  Sum3<Real> s;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(team, H / 4),
      [&](const int q, Sum3<Real>& acc) {
        const Quad<Real> a = load_quad<Streamed>(ra.hp + 4 * q);
        const Quad<Real> b = Count > 1 ? load_quad<Streamed>(rb.hp + 4 * q) : Quad<Real>{};
        const Quad<Real> c = Count > 2 ? load_quad<Streamed>(rc.hp + 4 * q) : Quad<Real>{};
        for (int d = 0; d < 4; ++d) {
          const Real hk = h(4 * q + d);
          acc.a += a.v[d] * hk;
          if (Count > 1) acc.b += b.v[d] * hk;
          if (Count > 2) acc.c += c.v[d] * hk;
        }
      },
      s);
  return s;
}

// Whether recurrent_sums reads the first Count of these rows a Quad per lane.
template <int Count, class Row>
KOKKOS_INLINE_FUNCTION bool reads_quads(const Row& ra, const Row& rb, const Row& rc, const int H) {
  if constexpr (IsWeightRow<Row>::value) {
    return H % 4 == 0 && quad_aligned(ra.hp) && (Count < 2 || quad_aligned(rb.hp)) &&
           (Count < 3 || quad_aligned(rc.hp));
  }
  return false;
}

// The recurrent parts of the first Count (1 to 3) of the rows ra, rb, rc times h, into the sums a,
// b, c (the others stay 0), by the thread's vector lanes over consecutive weights (coalesced reads
// on a GPU). WeightRows aligned to four values, with H a multiple of four, are read a Quad per
// lane: a warp's loads then cover 512 contiguous bytes per row and four times the bytes are in
// flight, which decides the step's time where the rows stream from L2 or HBM (the persistent
// rollout at H = 1024). The sums then run in another order than one value per lane.
template <int Count, class Member, class Row, class VecH>
KOKKOS_INLINE_FUNCTION auto recurrent_sums(const Member& team, const Row& ra, const Row& rb,
                                           const Row& rc, const VecH& h, const int H) {
  using Real = std::decay_t<decltype(ra.h(0))>;
  Sum3<Real> s;
  if constexpr (IsWeightRow<Row>::value) {
    if (reads_quads<Count>(ra, rb, rc, H))  // a unit's rows are streamed alike (ra's flag)
      return ra.streamed ? recurrent_sums_by_quads<true, Count>(team, ra, rb, rc, h, H)
                         : recurrent_sums_by_quads<false, Count>(team, ra, rb, rc, h, H);
  }
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(team, H),
      [&](const int k, Sum3<Real>& acc) {
        const Real hk = h(k);
        acc.a += ra.h(k) * hk;
        if (Count > 1) acc.b += rb.h(k) * hk;
        if (Count > 2) acc.c += rc.h(k) * hk;
      },
      s);
  return s;
}

// Member m's weights read in place from global memory. A row source gives gate g's weight row of
// unit j (row(g, j), whose x(k) and h(k) are its input and recurrent weights) and its biases
// (b_ih(g, j), b_hh(g, j)).
template <class Real, class Mem>
struct GruGlobalRows {
  using value_type = Real;
  GruWeights<Real, Mem> w;
  int m;
  // Row r, read through the Views rather than as raw pointers: GCC fuses the multiply-adds of the
  // two forms differently in double, and this form keeps the team kernels' results unchanged.
  struct Row {
    const GruGlobalRows& src;
    int r;
    KOKKOS_INLINE_FUNCTION Real x(const int k) const { return src.w.w_ih(src.m, r, k); }
    KOKKOS_INLINE_FUNCTION Real h(const int k) const { return src.w.w_hh(src.m, r, k); }
  };
  KOKKOS_INLINE_FUNCTION int hidden() const { return w.hidden(); }
  KOKKOS_INLINE_FUNCTION int input() const { return w.input(); }
  KOKKOS_INLINE_FUNCTION Row row(const int g, const int j) const {
    return {*this, g * w.hidden() + j};
  }
  KOKKOS_INLINE_FUNCTION Real b_ih(const int g, const int j) const {
    return w.b_ih(m, g * w.hidden() + j);
  }
  KOKKOS_INLINE_FUNCTION Real b_hh(const int g, const int j) const {
    return w.b_hh(m, g * w.hidden() + j);
  }
};

template <class Real>
struct GruGateSums {
  Sum3<Real> wx;  // W_r x, W_z x, W_n x
  Sum3<Real> uh;  // U_r h, U_z h, U_n h (U_n h only with WithUn)
};

// The gate sums of unit j by one team thread, its vector lanes splitting the dot products over
// consecutive weights (coalesced reads on a GPU): one pass over W and one over U feed all three
// gates. Without WithUn, U_n h is left 0 (reset Before applies U_n to r * h instead).
template <bool WithUn, class Member, class Rows, class VecX, class VecH>
KOKKOS_INLINE_FUNCTION GruGateSums<typename Rows::value_type> gru_gate_sums(
    const Member& team, const Rows& w, const int j, const VecX& x, const VecH& h) {
  using Real = typename Rows::value_type;
  const auto wr = w.row(0, j), wz = w.row(1, j), wn = w.row(2, j);
  GruGateSums<Real> s;
  Kokkos::parallel_reduce(
      Kokkos::ThreadVectorRange(team, w.input()),
      [&](const int k, Sum3<Real>& acc) {
        const Real xk = x(k);
        acc.a += wr.x(k) * xk;
        acc.b += wz.x(k) * xk;
        acc.c += wn.x(k) * xk;
      },
      s.wx);
  constexpr int kRecurrentRows = WithUn ? 3 : 2;
  s.uh = recurrent_sums<kRecurrentRows>(team, wr, wz, wn, h, w.hidden());
  return s;
}

// GRU_m(h, x)(j) for the units j in [unit_begin, unit_end), by the whole team, one unit per team
// thread (no result depends on the team size); put(j, h'_j) stores each result once. x (I), h (H)
// and rh (H, work space) are team-visible (scratch). `reset = Before` needs the whole r, so it
// requires the full range [0, H) and puts a team barrier between its two passes. The caller puts a
// team barrier between writing x/h and calling this, and another before reading what put stored;
// put must not overwrite h.
struct GruCell {
  template <class Member, class Rows, class VecX, class VecH, class VecWork, class Put>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const Rows& w, const GruReset reset,
                                            const VecX& x, const VecH& h, const VecWork& rh,
                                            const int unit_begin, const int unit_end,
                                            const Put& put) {
    using Real = typename Rows::value_type;
    const int H = w.hidden();
    const int I = w.input();
    if (reset == GruReset::After) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, unit_begin, unit_end), [&](const int j) {
        const GruGateSums<Real> s = gru_gate_sums<true>(team, w, j, x, h);
        const Real v = gru_update_after(s.wx.a + w.b_ih(0, j) + s.uh.a + w.b_hh(0, j),
                                        s.wx.b + w.b_ih(1, j) + s.uh.b + w.b_hh(1, j),
                                        s.wx.c + w.b_ih(2, j), s.uh.c + w.b_hh(2, j), h(j));
        Kokkos::single(Kokkos::PerThread(team), [&]() { put(j, v); });
      });
      return;
    }
    // Reset before: U_n (r * h) needs the whole r first.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int j) {
      const auto wr = w.row(0, j);
      Real wx = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, I),
          [&](const int k, Real& acc) { acc += wr.x(k) * x(k); }, wx);
      Real uh = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, H),
          [&](const int k, Real& acc) { acc += wr.h(k) * h(k); }, uh);
      const Real r = math::sigmoid(wx + w.b_ih(0, j) + uh + w.b_hh(0, j));
      Kokkos::single(Kokkos::PerThread(team), [&]() { rh(j) = r * h(j); });
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int j) {
      const auto wz = w.row(1, j), wn = w.row(2, j);
      Sum3<Real> wx;  // W_z x, W_n x
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, I),
          [&](const int k, Sum3<Real>& acc) {
            const Real xk = x(k);
            acc.b += wz.x(k) * xk;
            acc.c += wn.x(k) * xk;
          },
          wx);
      Sum3<Real> uh;  // U_z h, U_n (r * h)
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, H),
          [&](const int k, Sum3<Real>& acc) {
            acc.b += wz.h(k) * h(k);
            acc.c += wn.h(k) * rh(k);
          },
          uh);
      const Real z = math::sigmoid(wx.b + w.b_ih(1, j) + uh.b + w.b_hh(1, j));
      const Real v = gru_update_before(z, wx.c + uh.c + w.b_ih(2, j) + w.b_hh(2, j), h(j));
      Kokkos::single(Kokkos::PerThread(team), [&]() { put(j, v); });
    });
  }
};

}  // namespace detail
}  // namespace hpt

// Sum3 is reduced with Kokkos::Sum inside ThreadVectorRange: its identity is all zeros.
namespace Kokkos {
template <class Real>
struct reduction_identity<hpt::detail::Sum3<Real>> {
  KOKKOS_FORCEINLINE_FUNCTION static hpt::detail::Sum3<Real> sum() {
    return hpt::detail::Sum3<Real>();
  }
};
}  // namespace Kokkos
