#pragma once
// A synthetic training history for rollouts without a real run: a noisy exponentially decaying loss
// with consistent gradient, update and weight norms, pushed into a telemetry history step by step.
#include <cstdint>
#include <functional>

#include "kernels/telemetry_history.hpp"

namespace hpt::app {

struct SyntheticHistorySpec {
  int steps = 200;
  double initial_loss = 2.3;
  double final_loss = 0.4;
  double noise = 0.05;  // relative multiplicative noise of each loss
  double lr = 0.05;
  std::uint64_t seed = 1;
};

// Pushes `spec.steps` records into run 0 of `history` (one push per step, as training does) and
// calls `after_step` after each push (e.g. to encode, so the normaliser sees every step).
void fill_synthetic_history(const TelemetryHistory<real>& history, const SyntheticHistorySpec& spec,
                            const std::function<void()>& after_step = {});

}  // namespace hpt::app
