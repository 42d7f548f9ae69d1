#pragma once
// The [watch] options of run.mode = watch (docs/watch.md) and the judge's settings they make with
// the stop rule's [forecast] keys.
#include <string>

#include "core/config.hpp"
#include "forecast/live_judge.hpp"

namespace hpt::app {

void declare_watch_options(OptionSchema& schema);

// The judge's settings without the model (forecast.pretrained is loaded by the mode).
forecast::LiveJudgeSettings read_live_judge_settings(const Config& config);

}  // namespace hpt::app
