#pragma once
// run.mode = bench (docs/bench.md): times the encoder, GRU-step and rollout kernels at the deck's
// sizes.
#include "app/run_context.hpp"

namespace hpt::app {

void declare_bench_options(OptionSchema& schema);
// Output locations, before any work.
void check_bench_inputs(const RunContext& ctx);
int run_bench_mode(const RunContext& ctx);

}  // namespace hpt::app
