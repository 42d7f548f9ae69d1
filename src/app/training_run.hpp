#pragma once
// One training run of a deck: what run.mode = train runs, and what run.mode = compare runs once per
// arm. Built from the deck's styles, continued from a checkpoint where asked, summarised on the
// console.
#include <vector>

#include "app/run_context.hpp"
#include "train/trainer.hpp"

namespace hpt::app {

// Checks before Kokkos starts: the options that depend on each other, the data file, the trace's
// location and the restart file.
void check_training_inputs(const RunContext& ctx);

// Trains the deck in `ctx` and prints its summary. With `replay` the steps follow that pattern of
// real (1) and frozen (0) steps instead of train.hybrid (the comparison's freeze arm).
train::TrainSummary train_run(const RunContext& ctx, const std::vector<char>* replay = nullptr);

}  // namespace hpt::app
