#pragma once
// The [forecast] options of run.mode = forecast (also read by training with train.forecaster):
// their declaration, the horizons list, and the settings of the curve study
// (forecast/curve_study.hpp).
#include <vector>

#include "core/config.hpp"

namespace hpt::forecast {

struct CurveStudySettings;  // forecast/curve_study.hpp

void declare_forecast_options(OptionSchema& schema);

// forecast.horizons as increasing horizons >= 5 (InputError naming the key otherwise).
std::vector<int> parse_horizons(const Config& config);

// The [forecast] options the curve study computes with, plus run.seed, run.print_every and the
// online training options of [dynamics].
CurveStudySettings read_curve_study_settings(const Config& config);

}  // namespace hpt::forecast
