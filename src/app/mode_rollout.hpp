#pragma once
// run.mode = rollout (docs/architecture.md#modes): encode a training history, roll the ensemble out
// for N scenarios and Y steps from a seeded init or a model file, write paths and statistics.
#include "app/run_context.hpp"

namespace hpt::app {

void declare_rollout_options(OptionSchema& schema);
// Input checks that need no device: run before Kokkos starts (model file presence, format, sizes).
void check_rollout_inputs(const RunContext& ctx);
int run_rollout_mode(const RunContext& ctx);

}  // namespace hpt::app
