#pragma once
// The [watch] options of run.mode = watch (docs/watch.md) and the judge's settings they make with
// the stop rule's [forecast] keys.
#include <string>
#include <vector>

#include "core/config.hpp"
#include "forecast/live_judge.hpp"

namespace hpt::app {

void declare_watch_options(OptionSchema& schema);

// The fractions of the planned last step at which runs are judged: forecast.stop_at, then
// watch.rejudge_at. InputError naming watch.rejudge_at unless it is increasing within (stop_at, 1).
std::vector<double> judgment_rungs(const Config& config);

// The judge's settings without the model (forecast.pretrained is loaded by the mode).
forecast::LiveJudgeSettings read_live_judge_settings(const Config& config);

}  // namespace hpt::app
