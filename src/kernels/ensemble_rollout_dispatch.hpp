#pragma once
// Chooses the rollout kernel: the persistent one (weights resident on chip, one launch of teams
// that meet at a counter barrier each step) where the backend and sizes support it, else the
// team-per-path ensemble_rollout. Both compute SPEC 5 with the same random draws.
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_persistent.hpp"

namespace hpt {

template <class Space, class Real>
void ensemble_rollout_auto(const Space& space,
                           const RssmParams<Real, typename Space::memory_space>& params,
                           const GruReset reset,
                           const View2<Real, typename Space::memory_space>& h0,
                           const RolloutInputs<Real, typename Space::memory_space>& in,
                           const RolloutSettings& settings,
                           const RolloutOutputs<Real, typename Space::memory_space>& out) {
  if (persistent_rollout_supported<Space, Real>(params.members(), settings.scenarios,
                                                params.hidden(), params.input(),
                                                params.stochastic())) {
    ensemble_rollout_persistent(space, params, reset, h0, in, settings, out);
  } else {
    ensemble_rollout(space, params, reset, h0, in, settings, out);
  }
}

}  // namespace hpt
