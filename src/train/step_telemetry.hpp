#pragma once
// What a completed step leaves behind: its telemetry record (the encoder's input) and its trace
// row.
#include <cstdint>
#include <vector>

#include "kernels/telemetry_history.hpp"
#include "train/step_policy.hpp"
#include "train/trace_file.hpp"

namespace hpt::train {

// Validation of a step (NaN where none was made).
struct StepValidation {
  bool done = false;
  double loss = 0, accuracy = 0;
};

// The telemetry record of `step`; `optimizer_steps` is the optimizer's step count after it.
TelemetryRecord step_record(std::int64_t step, const StepOutcome& s, const StepValidation& val,
                            long optimizer_steps);

// The trace row of `step` with the encoder's features of this step.
TraceRow step_trace_row(std::int64_t step, const StepOutcome& s, const StepValidation& val,
                        double wall_time, std::vector<double> features);

}  // namespace hpt::train
