#pragma once
// run.mode = forecast: walk the loss curves of a sweep of training runs forward together, forecast
// each run's loss at several horizons with calibrated intervals (the RSSM ensemble), score the
// forecasts and three baselines against the realised curves, and judge which runs could have been
// stopped early.
#include <vector>

#include "app/run_context.hpp"

namespace hpt::app {

void declare_forecast_options(OptionSchema& schema);
// Input checks before Kokkos starts: options, the whole curve file, the output location.
void check_forecast_inputs(const RunContext& ctx);
// forecast.horizons as increasing horizons >= 5 (InputError naming the key otherwise).
std::vector<int> parse_horizons(const Config& config);
int run_forecast_mode(const RunContext& ctx);

}  // namespace hpt::app
