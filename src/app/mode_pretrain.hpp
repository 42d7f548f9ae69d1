#pragma once
// run.mode = pretrain: fits the learned level forecaster (forecast/level_model.hpp) to a corpus of
// loss curves (pretrain.input) and writes it as a level model file that forecast.pretrained reads.
#include "app/run_context.hpp"

namespace hpt::app {

// Input checks before Kokkos starts: options, the whole curve file (it must give samples at some
// horizon), the output location.
void check_pretrain_inputs(const RunContext& ctx);
int run_pretrain_mode(const RunContext& ctx);

}  // namespace hpt::app
