#pragma once
// A rollout path's start and one step (docs/method.md#ensemble-rollout) composed from the shared
// routines (GruCell, RolloutPrior, RolloutLossHead) for kernels that run one path per team
// (ensemble_rollout.hpp, ensemble_rollout_batched.hpp). The tiled and persistent kernels compose
// the same pieces around their own mapping of units to teams.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "core/math.hpp"
#include "kernels/gru_cell.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rollout_draws.hpp"
#include "kernels/rollout_loss_head.hpp"
#include "kernels/rollout_prior.hpp"
#include "kernels/rssm_params.hpp"

namespace hpt {
namespace detail {

// One path's team scratch for RolloutTeamStep: its loss state, h twice (a step reads one and
// writes the other), the GRU's work space, x and s.
template <class Space, class Real>
struct RolloutTeamScratch {
  using Scratch = ScratchView1<Space, Real>;
  using StateScratch = ScratchView1<Space, LossState<Real>>;
  StateScratch state;
  Scratch h_a, h_b, work, x, s;

  static std::size_t shmem_size(const int H, const int I, const int S) {
    return StateScratch::shmem_size(1) + 3 * Scratch::shmem_size(H) + Scratch::shmem_size(I) +
           Scratch::shmem_size(S);
  }
  template <class Member>
  KOKKOS_INLINE_FUNCTION RolloutTeamScratch(const Member& team, const int level, const int H,
                                            const int I, const int S)
      : state(team.team_scratch(level), 1),
        h_a(team.team_scratch(level), H),
        h_b(team.team_scratch(level), H),
        work(team.team_scratch(level), H),
        x(team.team_scratch(level), I),
        s(team.team_scratch(level), S) {}
};

// A path's start, by the whole team: h <- h0 (H), x <- x0 (I), state <- start, then put(state)
// once (the path's entry 0) and a team barrier.
struct RolloutPathStart {
  template <class Member, class VecH0, class VecX0, class Real, class VecH, class VecX, class Put>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const VecH0& h0, const VecX0& x0,
                                            const LossState<Real>& start, const VecH& h,
                                            const VecX& x, LossState<Real>& state, const Put& put) {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, int(h.extent(0))),
                         [&](const int j) { h(j) = h0(j); });
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, int(x.extent(0))),
                         [&](const int k) { x(k) = x0(k); });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      state = start;
      put(state);
    });
    team.team_barrier();
  }
};

// Step k of one path by the whole team (draws keyed by that step): h <- GRU_m(h_old, x), s from
// the prior on h, then the loss head, the loss state and x (put(state, |h|^2) writes the path's
// outputs). work (H) is the GRU's work space; h must not alias h_old. Ends with a team barrier, so
// the next step may read h, x and the state.
struct RolloutTeamStep {
  template <class Member, class Real, class Mem, class VecX, class VecH, class VecS, class Features,
            class Put>
  static KOKKOS_INLINE_FUNCTION void invoke(const Member& team, const RssmParams<Real, Mem>& p,
                                            const int m, const GruReset reset,
                                            const RolloutDraws& draws, const VecX& x,
                                            const VecH& h_old, const VecH& work, const VecH& h,
                                            const VecS& s, LossState<Real>& state,
                                            const Features& features, const Put& put) {
    GruCell::invoke(team, GruGlobalRows<Real, Mem>{p.gru, m}, reset, x, h_old, work, 0, p.hidden(),
                    [&](const int j, const Real v) { h(j) = v; });
    team.team_barrier();
    RolloutPrior::invoke(team, p, m, h, draws, s);
    team.team_barrier();
    RolloutLossHead::invoke(team, p, m, h, s, draws, state, features, x, put);
    team.team_barrier();
  }
};

}  // namespace detail
}  // namespace hpt
