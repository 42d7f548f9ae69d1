#pragma once
// One GRU step (docs/method.md#gru-cell) for B rows x E members in one fused kernel, and the
// team-level GRU cell that the ensemble rollout reuses. Every output unit is computed by one team
// thread (its vector lanes split the dot products over consecutive weights, so reads are coalesced
// on a GPU); no result depends on the team size.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
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

// Vector lanes per team thread: one warp per output unit on CUDA, one lane on the host backends.
template <class Space>
constexpr int team_vector_length() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Space, Kokkos::Cuda>::value) return 32;
#endif
  return 1;
}

// Scratch level for `bytes` per team: level 0 (on-chip on a GPU) when it fits, else level 1.
template <class Space>
int scratch_level_for(std::size_t bytes) {
  return bytes <= static_cast<std::size_t>(Kokkos::TeamPolicy<Space>::scratch_size_max(0)) ? 0 : 1;
}

template <class Space, class T>
using ScratchView1 =
    Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Team policy with `bytes` of scratch per team at `level`. team_size > 0 is used as given; 0 means
// Kokkos' choice, except on a GPU whose threads the league alone cannot fill: there as many vector
// groups as the kernel's registers allow (each output unit is one group's work, so more groups
// shorten every step of a small rollout).
template <class Space, class Body>
Kokkos::TeamPolicy<Space> make_team_policy(const Space& space, int league, int level,
                                           std::size_t bytes, const Body& body, int team_size) {
  using Policy = Kokkos::TeamPolicy<Space>;
  const int vector = team_vector_length<Space>();
  if (team_size <= 0 && vector > 1 && 8L * league * vector < long(space.concurrency())) {
    Policy probe(space, league, 1, vector);
    probe.set_scratch_size(level, Kokkos::PerTeam(bytes));
    team_size = probe.team_size_max(body, Kokkos::ParallelForTag());
  }
  Policy policy = team_size > 0 ? Policy(space, league, team_size, vector)
                                : Policy(space, league, Kokkos::AUTO, vector);
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  return policy;
}

// h_out(j) = GRU_m(h, x)(j) for one member m and the units j in [unit_begin, unit_end), computed
// by the whole team (the two conventions of GruReset: After is PyTorch's nn.GRUCell exactly,
// h' = (1 - z) n + z h; Before is the prototype's, h' = (1 - z) h + z n). x (I), h (H) and rh (H,
// work space) are team-visible (scratch); h_out (H) must not alias h. `reset = Before` needs the
// whole r, so it requires the full range [0, H). The caller puts a team barrier between writing x/h
// and calling this, and another before reading h_out.
template <class TeamMember, class Real, class Mem, class VecX, class VecH, class VecWork,
          class VecOut>
KOKKOS_INLINE_FUNCTION void gru_cell_team(const TeamMember& team, const GruWeights<Real, Mem>& w,
                                          const int m, const GruReset reset, const VecX& x,
                                          const VecH& h, const VecWork& rh, const VecOut& h_out,
                                          const int unit_begin, const int unit_end) {
  const int H = w.hidden();
  const int I = w.input();
  if (reset == GruReset::After) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, unit_begin, unit_end), [&](const int j) {
      Sum3<Real> wx;  // W_r x, W_z x, W_n x
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, I),
          [&](const int k, Sum3<Real>& acc) {
            const Real xk = x(k);
            acc.a += w.w_ih(m, j, k) * xk;
            acc.b += w.w_ih(m, H + j, k) * xk;
            acc.c += w.w_ih(m, 2 * H + j, k) * xk;
          },
          wx);
      Sum3<Real> uh;  // U_r h, U_z h, U_n h: one pass over U
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, H),
          [&](const int k, Sum3<Real>& acc) {
            const Real hk = h(k);
            acc.a += w.w_hh(m, j, k) * hk;
            acc.b += w.w_hh(m, H + j, k) * hk;
            acc.c += w.w_hh(m, 2 * H + j, k) * hk;
          },
          uh);
      const Real r = math::sigmoid(wx.a + w.b_ih(m, j) + uh.a + w.b_hh(m, j));
      const Real z = math::sigmoid(wx.b + w.b_ih(m, H + j) + uh.b + w.b_hh(m, H + j));
      const Real n = math::tanh(wx.c + w.b_ih(m, 2 * H + j) + r * (uh.c + w.b_hh(m, 2 * H + j)));
      // PyTorch's update: z keeps the old state, h' = (1 - z) n + z h.
      Kokkos::single(Kokkos::PerThread(team), [&]() { h_out(j) = (Real(1) - z) * n + z * h(j); });
    });
    return;
  }
  // Reset before: U_n (r * h) needs the whole r first.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int j) {
    Real wx = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, I),
        [&](const int k, Real& acc) { acc += w.w_ih(m, j, k) * x(k); }, wx);
    Real uh = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int k, Real& acc) { acc += w.w_hh(m, j, k) * h(k); }, uh);
    const Real r = math::sigmoid(wx + w.b_ih(m, j) + uh + w.b_hh(m, j));
    Kokkos::single(Kokkos::PerThread(team), [&]() { rh(j) = r * h(j); });
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H), [&](const int j) {
    Sum3<Real> wx;  // W_z x, W_n x
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, I),
        [&](const int k, Sum3<Real>& acc) {
          const Real xk = x(k);
          acc.b += w.w_ih(m, H + j, k) * xk;
          acc.c += w.w_ih(m, 2 * H + j, k) * xk;
        },
        wx);
    Sum3<Real> uh;  // U_z h, U_n (r * h)
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, H),
        [&](const int k, Sum3<Real>& acc) {
          acc.b += w.w_hh(m, H + j, k) * h(k);
          acc.c += w.w_hh(m, 2 * H + j, k) * rh(k);
        },
        uh);
    const Real z = math::sigmoid(wx.b + w.b_ih(m, H + j) + uh.b + w.b_hh(m, H + j));
    const Real n = math::tanh(wx.c + uh.c + w.b_ih(m, 2 * H + j) + w.b_hh(m, 2 * H + j));
    // The prototype's update: z takes the candidate, h' = (1 - z) h + z n.
    Kokkos::single(Kokkos::PerThread(team), [&]() { h_out(j) = (Real(1) - z) * h(j) + z * n; });
  });
}

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

namespace hpt {

// FLOPs of one GRU member-step (docs/bench.md#flop-counts): three gates, input and recurrent
// products.
inline double gru_step_flops(int hidden, int input) {
  return 6.0 * double(hidden) * (double(hidden) + double(input));
}

// Output units per team of gru_step with reset After (Before needs the whole row in one team).
constexpr int kGruUnitsPerTeam = 64;

// h_out(b, m, :) = GRU_m(h(b, m, :), x(b, m, :)) for every row b and member m: x (B,E,I),
// h and h_out (B,E,H). One team per (row, member, block of kGruUnitsPerTeam units) with reset
// After, per (row, member) with Before. h_out must not overlap h (the teams of one row run
// concurrently).
template <class Space, class Real>
HPT_LAUNCHER void gru_step(const Space& space,
                           const GruWeights<Real, typename Space::memory_space>& weights,
                           const GruReset reset, const View3<Real, typename Space::memory_space>& x,
                           const View3<Real, typename Space::memory_space>& h,
                           const View3<Real, typename Space::memory_space>& h_out) {
  const int E = weights.members();
  const int H = weights.hidden();
  const int I = weights.input();
  const int B = static_cast<int>(x.extent(0));
  HPT_REQUIRE(int(x.extent(1)) == E && int(x.extent(2)) == I, "gru_step: x must be (B, E, I)");
  HPT_REQUIRE(int(h.extent(0)) == B && int(h.extent(1)) == E && int(h.extent(2)) == H,
              "gru_step: h must be (B, E, H)");
  HPT_REQUIRE(int(h_out.extent(0)) == B && int(h_out.extent(1)) == E && int(h_out.extent(2)) == H,
              "gru_step: h_out must be (B, E, H)");
  HPT_REQUIRE(h_out.data() != h.data(), "gru_step: h_out must not be the same View as h");
  if (B == 0 || E == 0) return;

  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = detail::ScratchView1<Space, Real>;
  const std::size_t bytes = Scratch::shmem_size(I) + 2 * Scratch::shmem_size(H);
  const int level = detail::scratch_level_for<Space>(bytes);
  const int units = reset == GruReset::After ? kGruUnitsPerTeam : H;
  const int blocks = (H + units - 1) / units;
  const GruWeights<Real, typename Space::memory_space> w = weights;

  const auto body = KOKKOS_LAMBDA(const Member& team) {
    const int block = team.league_rank() % blocks;
    const int b = team.league_rank() / blocks / E;
    const int m = team.league_rank() / blocks % E;
    Scratch xs(team.team_scratch(level), I);
    Scratch hs(team.team_scratch(level), H);
    Scratch rh(team.team_scratch(level), H);
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, I),
                         [&](const int k) { xs(k) = x(b, m, k); });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, H),
                         [&](const int k) { hs(k) = h(b, m, k); });
    team.team_barrier();
    const auto out = Kokkos::subview(h_out, b, m, Kokkos::ALL());
    const int end = (block + 1) * units < H ? (block + 1) * units : H;
    detail::gru_cell_team(team, w, m, reset, xs, hs, rh, out, block * units, end);
  };
  const auto policy = detail::make_team_policy(space, B * E * blocks, level, bytes, body, 0);
  Kokkos::parallel_for("hpt::gru_step", policy, body);
}

}  // namespace hpt
