#pragma once
// run.mode = train (docs/architecture.md#modes): full training (train.hybrid = off) or the hybrid
// loop (on), with telemetry, trace and checkpoints.
#include "app/run_context.hpp"

namespace hpt::app {

// Checks before Kokkos starts: the data file, the restart file.
void check_train_inputs(const RunContext& ctx);
int run_train_mode(const RunContext& ctx);

}  // namespace hpt::app
