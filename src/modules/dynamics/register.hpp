#pragma once
// The dynamics styles and their deck options (docs/architecture.md#styles).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "modules/dynamics/dynamics.hpp"

namespace hpt {

// [dynamics] style, members, hidden, stochastic, seed; [gru] reset.
void declare_dynamics_options(OptionSchema& schema);

void register_dynamics_styles(Registry<Dynamics>& registry);

}  // namespace hpt
