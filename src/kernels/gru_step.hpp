#pragma once
// One GRU step (docs/method.md#gru-cell) for B rows x E members in one fused kernel (the team-level
// GruCell of gru_cell.hpp), and the team launch helpers the rollout kernels share. Every output
// unit is computed by one team thread (its vector lanes split the dot products over consecutive
// weights, so reads are coalesced on a GPU); no result depends on the team size.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/gru_weights.hpp"

namespace hpt {
namespace detail {

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

}  // namespace detail

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

  using Mem = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = detail::ScratchView1<Space, Real>;
  const std::size_t bytes = Scratch::shmem_size(I) + 2 * Scratch::shmem_size(H);
  const int level = detail::scratch_level_for<Space>(bytes);
  const int units = reset == GruReset::After ? kGruUnitsPerTeam : H;
  const int blocks = (H + units - 1) / units;
  const GruWeights<Real, Mem> w = weights;

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
    detail::GruCell::invoke(team, detail::GruGlobalRows<Real, Mem>{w, m}, reset, xs, hs, rh,
                            block * units, end, [&](const int j, const Real v) { out(j) = v; });
  };
  const auto policy = detail::make_team_policy(space, B * E * blocks, level, bytes, body, 0);
  Kokkos::parallel_for("hpt::gru_step", policy, body);
}

}  // namespace hpt
