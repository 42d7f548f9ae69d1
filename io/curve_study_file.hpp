#pragma once
// The output file of run.mode = forecast (docs/outputs.md#forecast-output): every scored forecast
// of the curve study (forecast/curve_study.hpp) with its baselines, the scores per horizon, the
// origins' beat probabilities, the runs and the stop list, written atomically.
#include <string>
#include <vector>

#include "forecast/curve.hpp"
#include "forecast/curve_study.hpp"

namespace hpt::io {

// `runs`: the curves the study replayed; `gemm_gflops`: this machine's GEMM rate the rollouts are
// compared with.
void write_curve_study_file(const std::string& path, const std::string& resolved_deck,
                            const std::vector<forecast::Curve>& runs,
                            const forecast::CurveStudyResult& result, double gemm_gflops);

}  // namespace hpt::io
