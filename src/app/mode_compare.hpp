#pragma once
// run.mode = compare (hpt --compare DECK): the honest comparison of a hybrid deck. For each seed
// of compare.seeds it trains four arms on the same problem, seed and optimizer:
//   full    train.hybrid = off for train.steps steps;
//   hybrid  the deck's hybrid loop; B of its steps had a backward pass;
//   budget  train.hybrid = off for B steps, the schedule compressed to B steps (warmup, step size
//           and total steps scaled by B / steps) so that it fully decays within the budget;
//   freeze  the hybrid arm's exact pattern of real and skipped steps, parameters left as they are
//           on the skipped steps (no predicted updates).
// It prints one table (validation loss and accuracy, backward passes, wall time, the validation
// loss at the hybrid's number of backward passes) and writes <name>_compare.h5.
#include "app/run_context.hpp"

namespace hpt::app {

void declare_compare_options(OptionSchema& schema);
// Checks before Kokkos starts: a hybrid deck that can train, no restart.
void check_compare_inputs(const RunContext& ctx);
int run_compare_mode(const RunContext& ctx);

}  // namespace hpt::app
