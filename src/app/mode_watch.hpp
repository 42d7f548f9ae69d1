#pragma once
// run.mode = watch: follows a folder of curve files that a running sweep writes, and at every poll
// forecasts every run, judges the runs that reached their judgment step, writes the status file
// and acts on stop decisions (docs/watch.md).
#include "app/run_context.hpp"

namespace hpt::app {

// Every input checked before any work: InputError naming the key or file.
void check_watch_inputs(const RunContext& ctx);
int run_watch_mode(const RunContext& ctx);

}  // namespace hpt::app
