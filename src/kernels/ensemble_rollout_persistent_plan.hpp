#pragma once
// How the persistent rollout (ensemble_rollout_persistent.hpp) splits a problem over teams and
// how many of each team's weight rows it keeps in team scratch, or why it cannot run. The split is
// plain arithmetic on the sizes and two machine figures (split_persistent_rollout), so host tests
// check it although only a CUDA build runs the kernel.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "kernels/gru_step.hpp"
#include "core/types.hpp"
#include "kernels/loss_state.hpp"

namespace hpt {

// How the persistent rollout splits the work, or why it cannot run.
struct PersistentRolloutPlan {
  bool supported = false;
  int teams_per_path = 0;   // T
  int units_per_team = 0;   // U: GRU units (3U weight rows) per team; the last team may have fewer
  int rows_in_scratch = 0;  // R, 0 <= R <= 3U: the team's rows [0, R) live in scratch, the rest
                            // are read from global memory every step
  // F, min(R, U) <= F <= U: the rows in global memory of the team's units [0, F) are read through
  // the caches as usual, those of the units from F on (none of whose rows is in scratch) as
  // streaming loads (see units_cached_in_l2)
  int stream_from = 0;
  std::size_t scratch_bytes = 0;
};

// The share of the L2 cache that the persistent rollout's cached weight rows may fill.
constexpr double kPersistentL2Share = 0.6;

// Rows in global memory of a team's units [0, n): 3n minus those of its rows [0, R) in scratch (row
// g U + u is gate g of unit u).
inline long global_rows_of_units(const PersistentRolloutPlan& plan, int n) {
  long rows = 3L * n;
  for (int g = 0; g < 3; ++g) {
    const long resident = long(plan.rows_in_scratch) - long(g) * plan.units_per_team;
    rows -= resident < 0 ? 0 : (resident < n ? resident : n);
  }
  return rows;
}

// The first unit of each team whose rows the persistent rollout reads as streaming loads (evicted
// first), so that the launch's rows read through the caches (`teams` teams, rows of I + H values)
// fill at most kPersistentL2Share of an L2 cache of l2_bytes. Each step reads every row once, in
// the same order: a sweep larger than the cache evicts every line before its next use (the H = 1024
// rollout's 63 MB against an H200's 50 MB hit L2 on 7 % of its loads), while a part that fits
// stays there from step to step. Units with a row in scratch are never streamed; l2_bytes 0
// (unknown, or no GPU): none is.
template <class Real>
int units_cached_in_l2(const PersistentRolloutPlan& plan, long teams, int H, int I,
                       std::size_t l2_bytes) {
  const int U = plan.units_per_team;
  const int first = plan.rows_in_scratch < U ? plan.rows_in_scratch : U;
  if (l2_bytes == 0 || teams <= 0) return U;
  const double row_bytes = double(I + H) * double(sizeof(Real));
  const double budget = kPersistentL2Share * double(l2_bytes) / (double(teams) * row_bytes);
  int n = U;
  while (n > first && double(global_rows_of_units(plan, n)) > budget) --n;
  return n;
}

namespace detail {

// The L2 cache of Space's device in bytes; 0 where unknown (not a CUDA space).
template <class Space>
std::size_t l2_cache_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Space, Kokkos::Cuda>::value) {
    int bytes = 0;
    if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, Kokkos::Cuda().cuda_device()) ==
        cudaSuccess)
      return std::size_t(bytes > 0 ? bytes : 0);
  }
#endif
  return 0;
}

// Values each team contributes per step for its units: A h (S), B h (S), C_0 h, C_1 h, |h|^2.
KOKKOS_INLINE_FUNCTION int persistent_head_count(int stochastic) {
  return 2 * stochastic + 3;
}

// Level-0 scratch bytes of a view of n values of T (Kokkos' rule, the same on every backend).
template <class T>
std::size_t scratch_view_bytes(std::size_t n) {
  return ScratchView1<Kokkos::DefaultExecutionSpace, T>::shmem_size(n);
}

// Scratch of one team with U units of which R weight rows are resident.
template <class Real>
std::size_t persistent_scratch_bytes(int H, int I, int S, int U, int R) {
  return scratch_view_bytes<Real>(std::size_t(R) * (I + H))  // weight rows [W | U] held on chip
         + scratch_view_bytes<Real>(H)                       // full h (or r*h with reset Before)
         + scratch_view_bytes<Real>(I)                       // x
         + 4 * scratch_view_bytes<Real>(U)  // new h, old h, z and the x-part of n of my units
         + scratch_view_bytes<Real>(persistent_head_count(S))  // summed head values, then s
         + scratch_view_bytes<Real>(S + 1)  // the step's normal draws (S for s, one for the loss)
         + scratch_view_bytes<LossState<Real>>(1);
}

}  // namespace detail

// The persistent rollout's split for E members, N scenarios and a GRU of H units on input I with S
// stochastic units, in precision Real, on a GPU of `multiprocessors` multiprocessors whose teams
// may hold up to `scratch_max` bytes of level-0 scratch:
//  - co-residency: the league (N*E*T teams) is at most the number of multiprocessors. A launch
//    succeeds only when one team fits one multiprocessor, so with at most one team per
//    multiprocessor every team is resident at once (the path barrier needs it);
//  - T = the fewest teams per path whose units each team's vector groups cover in one round (a
//    team has one group per three head values, ceil((2S + 3) / 3), whatever its units), within
//    what that rule allows and at least 2; U = ceil(H / T). More teams would give the GRU no
//    shorter round but make every step's barrier wait for more arrivals and its exchange read more
//    partial sums (on an H200 at H = 256: 43 teams of 6 units 17.0 µs per step, 13 of 20 13.0 µs);
//  - R = as many of the team's 3U weight rows (each I + H values) as fit the scratch left after the
//    team's vectors, at most 3U. The rows beyond R are read from global memory every step (from L2
//    when the remainder of all teams fits it). Unsupported when not even the vectors fit.
template <class Real>
PersistentRolloutPlan split_persistent_rollout(int E, int N, int H, int I, int S,
                                               long multiprocessors, std::size_t scratch_max) {
  PersistentRolloutPlan plan;
  if (E < 1 || N < 1 || H < 2 || I < 1 || S < 1) return plan;
  const long most_per_path = multiprocessors / (long(N) * long(E));
  if (most_per_path < 2) return plan;
  const long groups = (detail::persistent_head_count(S) + 2) / 3;
  const long fewest = (long(H) + groups - 1) / groups;
  const long per_path = fewest < 2 ? 2 : (fewest < most_per_path ? fewest : most_per_path);
  const int T_max = int(per_path < long(H) ? per_path : long(H));
  const int U = (H + T_max - 1) / T_max;
  plan.units_per_team = U;
  plan.teams_per_path = (H + U - 1) / U;
  const std::size_t vectors = detail::persistent_scratch_bytes<Real>(H, I, S, U, 0);
  if (plan.teams_per_path < 2 || vectors > scratch_max) return plan;
  const std::size_t row = std::size_t(I + H) * sizeof(Real);
  const std::size_t fit = (scratch_max - vectors) / row;
  plan.rows_in_scratch = int(fit < std::size_t(3 * U) ? fit : std::size_t(3 * U));
  plan.scratch_bytes = detail::persistent_scratch_bytes<Real>(H, I, S, U, plan.rows_in_scratch);
  plan.supported = plan.scratch_bytes <= scratch_max;
  return plan;
}

// The split on Space (supported only on Kokkos::Cuda): multiprocessors taken as concurrency() /
// 2048 (concurrency is SMs x max resident threads per SM, and no NVIDIA GPU has more than 2048
// threads per SM, so this never over-counts), scratch_max = scratch_size_max(0), or
// `scratch_limit` bytes where smaller and nonzero (tests use it to force rows out of scratch).
template <class Space, class Real>
PersistentRolloutPlan plan_persistent_rollout(int E, int N, int H, int I, int S,
                                              std::size_t scratch_limit = 0) {
  bool gpu = false;
#if defined(KOKKOS_ENABLE_CUDA)
  gpu = std::is_same<Space, Kokkos::Cuda>::value;
#endif
  if (!gpu) return PersistentRolloutPlan{};
  const long multiprocessors = long(Space().concurrency()) / 2048;
  std::size_t scratch_max = std::size_t(Kokkos::TeamPolicy<Space>::scratch_size_max(0));
  if (scratch_limit > 0 && scratch_limit < scratch_max) scratch_max = scratch_limit;
  PersistentRolloutPlan plan =
      split_persistent_rollout<Real>(E, N, H, I, S, multiprocessors, scratch_max);
  const long teams = long(N) * long(E) * plan.teams_per_path;
  plan.stream_from = units_cached_in_l2<Real>(plan, teams, H, I, detail::l2_cache_bytes<Space>());
  return plan;
}

// Whether ensemble_rollout_persistent can run these sizes on Space (see plan_persistent_rollout).
template <class Space, class Real = real>
bool persistent_rollout_supported(int E, int N, int H, int I, int S) {
  return plan_persistent_rollout<Space, Real>(E, N, H, I, S).supported;
}

}  // namespace hpt
