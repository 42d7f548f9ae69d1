#pragma once
// Inputs of the rollout bench and the comparison of every timed kernel with a plain host reference
// (docs/bench.md#reference-deviation: a fast but wrong kernel shows as a large deviation from
// the host reference computed once on the same inputs).
#include <cstdint>
#include <string>
#include <vector>

#include "app/bench_sizes.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/reference/encode_reference.hpp"
#include "kernels/run_layout.hpp"
#include "kernels/telemetry_history.hpp"
#include "physics-style-modules/encoder/encoder.hpp"

namespace hpt::app {

struct RolloutBenchInputs {
  RssmParams<real> params;
  GruReset reset = GruReset::After;
  View2<real> h0;
  RolloutInputs<real> inputs;
  RolloutSettings settings;
};

// Seeded random parameters, latents, features and loss state for one size (rich feature update).
RolloutBenchInputs make_rollout_bench_inputs(const RolloutSize& size, std::uint64_t seed);
// Pushes `steps` seeded random telemetry records into every run of `history` (one push per step, as
// training and replay do) and keeps the plain host record of the first `tracked` runs.
std::vector<reference::HostRun> fill_random_history(const TelemetryHistory<real>& history,
                                                    int steps, int tracked, std::uint64_t seed);

// max |kernel - reference| / max(1, |reference|) over the loss paths of the first `scenarios`
// scenarios (every member).
double rollout_reference_deviation(const RolloutBenchInputs& in, const RolloutOutputs<real>& out,
                                   int scenarios);
// The same for one GRU step, over the rows of the first `scenarios` scenarios.
double gru_reference_deviation(const RolloutBenchInputs& in, const View3<real>& x,
                               const View3<real>& h, const View3<real>& h_out, int scenarios);
// The same for the raw features of the `style` encoder kernel on the runs the host tracked (the
// rich kernel in the layout `launch` names).
double encoder_reference_deviation(const std::string& style, const TelemetryHistory<real>& history,
                                   const std::vector<reference::HostRun>& host,
                                   const EncodeLaunch& launch = {});

}  // namespace hpt::app
