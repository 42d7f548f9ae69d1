#pragma once
// The dynamics styles and their deck options (docs/architecture.md#styles).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/dynamics/dynamics.hpp"

namespace hpt {

// [dynamics] style, members, hidden, stochastic, seed; [gru] reset.
void declare_dynamics_options(OptionSchema& schema);

void register_dynamics_styles(Registry<Dynamics>& registry);

// Bytes of the parameters, GRU and heads of E members of width H, input I, stochastic S (leading
// terms).
double rssm_parameter_bytes(double E, double H, double I, double S);
// The RSSM ensemble trained online for `runs` runs: parameters, gradients and Adam buffers, the
// BPTT window's activations and the runs' rings.
MemoryNeed rssm_training_memory(const Config& config, double runs);

}  // namespace hpt
