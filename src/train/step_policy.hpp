#pragma once
// How one training step advances the model: the step policy chosen by `train.hybrid`. `off` is full
// training (every step a real step: forward, backward, optimizer); `on` is the hybrid loop
// (train/hybrid_policy.hpp), which adds predicted steps; `replay` repeats a given pattern of real
// and frozen steps (the freeze arm of the comparison). The trainer around it does telemetry,
// validation, reporting and checkpoints the same way for every policy.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "physics-style-modules/dataset/dataset.hpp"
#include "physics-style-modules/model/model.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"
#include "train/lr_schedule.hpp"
#include "train/state_registry.hpp"
#include "train/trace_file.hpp"

namespace hpt::train {

struct TrainState;

// What a step did, for telemetry, the trace and the stop rules.
struct StepOutcome {
  bool real = true;         // a backward pass was made
  int phase = 1;            // telemetry::PhaseCode of the step
  LossValue loss;           // minibatch loss (and accuracy) at the parameters before the update;
                            // NaN on a predicted step without a probe forward pass
  StepTelemetry optimizer;  // the update's telemetry (real steps)
  double lr = 0;
  bool drew_batch = true;   // a minibatch was drawn (a real step, or a forward pass only)
  bool non_finite = false;  // the loss or the gradient was not finite: nothing was applied
  double non_finite_value = 0;
  std::string non_finite_what;  // "loss" or "gradient norm"
  // Hybrid loop, for the trace (NaN / 0 where none): the current predict block's horizon, its
  // forecast of log L at the horizon (mean and 95 % bound), and the entry rule's ratio
  // std / improvement of the last decision; verdict +1 accepted, -1 rolled back at this step.
  int block_horizon = 0;
  double forecast_mean = std::numeric_limits<double>::quiet_NaN();
  double forecast_hi = std::numeric_limits<double>::quiet_NaN();
  double confidence = std::numeric_limits<double>::quiet_NaN();
  int verdict = 0;
};

// An event of the policy for the trace's event log.
struct PolicyEvent {
  std::int64_t step;
  TraceEvent kind;
  double value;
  std::string message;  // printed to the console when not empty
};

class StepPolicy {
 public:
  virtual ~StepPolicy() = default;
  virtual std::string name() const = 0;
  // Runs step `step` (1-based) on a fresh minibatch of `batch_size` rows.
  virtual StepOutcome run(std::int64_t step, int batch_size) = 0;
  // After the trainer recorded the step (telemetry, encoder, forecaster): `features` (1, I) are the
  // encoder's features after the newest real step. May fill the outcome's hybrid fields.
  virtual void after_step(std::int64_t, StepOutcome&, const View2<real>&) {}
  // Events since the last call.
  std::vector<PolicyEvent> take_events() {
    std::vector<PolicyEvent> out;
    out.swap(events_);
    return out;
  }
  // Its state for checkpoints, and what to redo after a checkpoint was loaded into it.
  virtual void declare_state(StateRegistry&, const std::string&) {}
  virtual void after_load() {}
  // Counts for the comparison's records (name, value), e.g. accepted predict blocks.
  virtual std::vector<std::pair<std::string, double>> counters() const { return {}; }
  // Lines for the run's summary table (quantity, value).
  virtual std::vector<std::pair<std::string, std::string>> report(double /*real_steps*/) const {
    return {};
  }

 protected:
  std::vector<PolicyEvent> events_;  // what take_events() hands over
};

// The model's view of a minibatch (labels or targets, whichever the data set has).
Model::batch_type model_batch(const MiniBatch& batch);

// A real step: forward, backward, the optimizer at lr_scale times the schedule's learning rate. A
// non-finite loss stops before the backward pass; a non-finite gradient leaves the parameters
// unchanged. On several processes (state.comm) each takes its shard of the global batch of
// batch_size rows, and loss and gradient are averaged over them before use.
StepOutcome real_step(const TrainState& state, const LrSchedule& schedule, std::int64_t step,
                      int batch_size, double lr_scale = 1.0);

// `train.hybrid = off`: every step is a real step.
std::unique_ptr<StepPolicy> make_full_training_policy(const TrainState& state,
                                                      const LrSchedule& schedule);

// What a step was, for a replay: a real step, or a step without a backward pass that drew a
// minibatch (a forward pass) or none.
enum StepKind : char { kFrozenStep = 0, kRealStep = 1, kForwardStep = 2 };

// Step s (1-based) is a real step when real_steps[s - 1] is kRealStep; otherwise the parameters
// stay as they are, and with kForwardStep the minibatch is drawn and not used, so later steps see
// the data the replayed run saw. Steps beyond the pattern are real.
std::unique_ptr<StepPolicy> make_replay_policy(const TrainState& state, const LrSchedule& schedule,
                                               std::vector<char> real_steps);

}  // namespace hpt::train
