#pragma once
// run.mode = train (docs/architecture.md#modes): full training (train.hybrid = off) or the hybrid
// loop (on), with telemetry, trace and checkpoints.
#include <vector>

#include "app/run_context.hpp"
#include "train/trainer.hpp"

namespace hpt::app {

void declare_train_options(OptionSchema& schema);
// Checks before Kokkos starts: the data file, the restart file.
void check_train_inputs(const RunContext& ctx);
int run_train_mode(const RunContext& ctx);

// One training run of the deck in `ctx`, its summary printed. With `replay` the steps follow that
// pattern of real (1) and frozen (0) steps instead of train.hybrid (the comparison's freeze arm).
train::TrainSummary train_run(const RunContext& ctx, const std::vector<char>* replay = nullptr);

}  // namespace hpt::app
