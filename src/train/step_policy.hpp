#pragma once
// How one training step advances the model: the step policy chosen by `train.hybrid`. `off` is full
// training (every step a real step: forward, backward, optimizer); the hybrid policy adds predicted
// steps. The trainer around it does telemetry, validation, reporting and checkpoints the same way
// for every policy.
#include <cstdint>
#include <memory>
#include <string>

#include "modules/model/model.hpp"
#include "modules/optimizer/optimizer.hpp"
#include "train/checkpoint.hpp"
#include "train/lr_schedule.hpp"

namespace hpt::train {

// What a step did, for telemetry and the stop rules.
struct StepOutcome {
  bool real = true;         // a backward pass was made
  int phase = 1;            // telemetry::PhaseCode of the step
  LossValue loss;           // minibatch loss (and accuracy) at the parameters before the update
  StepTelemetry optimizer;  // the update's telemetry (real steps)
  double lr = 0;
  bool non_finite = false;  // the loss or the gradient was not finite: nothing was applied
  double non_finite_value = 0;
  std::string non_finite_what;  // "loss" or "gradient norm"
};

class StepPolicy {
 public:
  virtual ~StepPolicy() = default;
  virtual std::string name() const = 0;
  // Runs step `step` (1-based) on a fresh minibatch of `batch_size` rows.
  virtual StepOutcome run(std::int64_t step, int batch_size) = 0;
};

// A real step: forward, backward, the optimizer at the schedule's learning rate. A non-finite loss
// stops before the backward pass; a non-finite gradient leaves the parameters unchanged.
StepOutcome real_step(const TrainState& state, const LrSchedule& schedule, std::int64_t step,
                      int batch_size);

// `train.hybrid = off`: every step is a real step.
std::unique_ptr<StepPolicy> make_full_training_policy(const TrainState& state,
                                                      const LrSchedule& schedule);

}  // namespace hpt::train
