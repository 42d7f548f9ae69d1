#pragma once
// The [forecast] options of run.mode = forecast (also read by training with train.forecaster):
// their declaration, the horizons list, and the settings of the curve study
// (forecast/curve_study.hpp).
#include <string>
#include <vector>

#include "core/config.hpp"
#include "forecast/curve.hpp"
#include "forecast/stop_rule.hpp"

namespace hpt::forecast {

struct CurveStudySettings;  // forecast/curve_study.hpp

void declare_forecast_options(OptionSchema& schema);

// forecast.horizons as increasing horizons >= 5 (InputError naming the key otherwise).
std::vector<int> parse_horizons(const Config& config);

// The [forecast] options the curve study computes with, plus run.seed, run.print_every and the
// online training options of [dynamics].
// InputError when forecast.stop_at is not strictly between 0 and 1.
CurveStudySettings read_curve_study_settings(const Config& config);

// forecast.stop_rule (the stop list of forecast mode and of a live watch).
StopRule stop_rule_from_config(const Config& config);
// forecast.stop_against (likewise shared by forecast mode and the live watch).
StopAgainst stop_against_from_config(const Config& config);
// forecast.stop_quantile (InputError unless strictly between 0 and 1).
double stop_quantile_from_config(const Config& config);

// With forecast.stop_on = validation, every run must have validation losses (InputError naming
// the key and the first run without them).
void check_stop_level(const CurveStudySettings& settings, const CurveSet& set);

// Keeps the horizons that at least one run is long enough to score, with a note naming the
// others; InputError naming forecast.horizons when no run can score any of them.
void fit_horizons_to_runs(CurveStudySettings& settings, const CurveSet& set,
                          std::vector<std::string>& notes);

}  // namespace hpt::forecast
