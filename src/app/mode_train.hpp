#pragma once
// run.mode = train (docs/architecture.md#modes) with hybrid = off: full training with telemetry,
// trace and checkpoints.
#include "app/run_context.hpp"

namespace hpt::app {

void declare_train_options(OptionSchema& schema);
// Checks before Kokkos starts: the data file, the restart file.
void check_train_inputs(const RunContext& ctx);
int run_train_mode(const RunContext& ctx);

}  // namespace hpt::app
