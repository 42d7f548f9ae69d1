#include "train/step_policy.hpp"

#include <cmath>

#include "kernels/telemetry_history.hpp"
#include "train/checkpoint.hpp"
#include "train/data_parallel.hpp"

namespace hpt::train {

Model::batch_type model_batch(const MiniBatch& b) {
  Model::batch_type out;
  out.x = b.x;
  if (b.labels.extent(0) > 0) out.labels = b.labels;
  if (b.targets.extent(0) > 0) out.targets = b.targets;
  return out;
}

namespace {

class FullTraining final : public StepPolicy {
 public:
  FullTraining(const TrainState& state, const LrSchedule& schedule)
      : state_(state), schedule_(schedule) {}
  std::string name() const override { return "full training"; }
  StepOutcome run(std::int64_t step, int batch_size) override {
    return real_step(state_, schedule_, step, batch_size);
  }

 private:
  TrainState state_;
  LrSchedule schedule_;
};

class Replay final : public StepPolicy {
 public:
  Replay(const TrainState& state, const LrSchedule& schedule, std::vector<char> real_steps)
      : state_(state), schedule_(schedule), real_(std::move(real_steps)) {}
  std::string name() const override { return "replay of a real/frozen step pattern"; }
  StepOutcome run(std::int64_t step, int batch_size) override {
    const char kind =
        step > std::int64_t(real_.size()) ? char(kRealStep) : real_[std::size_t(step - 1)];
    if (kind == kRealStep) return real_step(state_, schedule_, step, batch_size);
    StepOutcome out;
    out.real = false;
    out.drew_batch = kind == kForwardStep;
    if (out.drew_batch) state_.dataset.next_batch(batch_size);
    out.phase = telemetry::kPredict;
    out.loss.loss = out.loss.accuracy = std::numeric_limits<double>::quiet_NaN();
    out.lr = schedule_(step - 1);
    return out;
  }

 private:
  TrainState state_;
  LrSchedule schedule_;
  std::vector<char> real_;
};

}  // namespace

StepOutcome real_step(const TrainState& state, const LrSchedule& schedule, std::int64_t step,
                      int batch_size, double lr_scale) {
  StepOutcome out;
  out.real = true;
  out.phase = telemetry::kFull;
  // Data-parallel: this process's shard of the global batch; loss and gradient are averaged over
  // the processes before anything is decided from them, so every process takes the same step.
  const auto batch = model_batch(state.dataset.next_batch(batch_size));
  out.loss = mean_over_ranks(state.comm, state.model.forward(batch));
  if (!std::isfinite(out.loss.loss)) {
    out.non_finite = true, out.non_finite_value = out.loss.loss, out.non_finite_what = "loss";
    return out;
  }
  state.model.backward(batch);
  average_gradient(state.comm, state.model.parameters().gradients());
  out.lr = schedule(step - 1) * lr_scale;
  out.optimizer = state.optimizer.step(out.lr);
  if (!out.optimizer.applied) {
    out.non_finite = true, out.non_finite_value = out.optimizer.grad_norm;
    out.non_finite_what = "gradient norm";
  }
  return out;
}

std::unique_ptr<StepPolicy> make_full_training_policy(const TrainState& state,
                                                      const LrSchedule& schedule) {
  return std::make_unique<FullTraining>(state, schedule);
}

std::unique_ptr<StepPolicy> make_replay_policy(const TrainState& state, const LrSchedule& schedule,
                                               std::vector<char> real_steps) {
  return std::make_unique<Replay>(state, schedule, std::move(real_steps));
}

}  // namespace hpt::train
