#pragma once
// run.mode = forecast: walk the loss curves of a sweep of training runs forward together, forecast
// each run's loss at several horizons with calibrated intervals (the RSSM ensemble), score the
// forecasts and three baselines against the realised curves, and judge which runs could have been
// stopped early (the curve study, forecast/curve_study.hpp; its options: forecast_options.hpp).
#include "app/run_context.hpp"

namespace hpt::app {

// Input checks before Kokkos starts: options, the whole curve file, the output location.
void check_forecast_inputs(const RunContext& ctx);
int run_forecast_mode(const RunContext& ctx);

}  // namespace hpt::app
