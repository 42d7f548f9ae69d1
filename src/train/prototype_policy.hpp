#pragma once
// `train.hybrid = on` with `hybrid.controller = prototype`
// (docs/method.md#parity-with-the-prototype): the prototype's hybrid loop, for comparison with
// hpt's. Its controller (train/prototype_controller.hpp) spends each decision's step budget: Warmup
// and Full steps are real steps, and on Full steps the prototype's RSSM (dynamics = rssm_prototype)
// records its one-step error and trains on the step; Predict and Correct steps only run the forward
// pass (the prototype's predicted and corrective weight deltas never reached the weights, so the
// parameters stay as they are: update = none). The divergence monitor checks every step after the
// warmup; a warning or a critical alarm makes the next block a Full one (a warning also ends the
// run of predict blocks). Nothing is rolled back: the prototype had no rollback.
//
// Quirks of the prototype kept, because they change numbers: the forecaster learns only on Full
// steps (not in the warmup), from the state before the step (its features and the previous
// step's loss), and its latents advance only then; the confidence is computed at each decision from
// a 10-step forecast, the recent one-step errors and the loss EMAs (updated on every step). Not
// kept: the prototype's monitor received a forecast error where it expected a forecast; here the
// monitor compares each predicted step's loss with the block's forecast for that step.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "physics-style-modules/dynamics/rssm_prototype.hpp"
#include "train/checkpoint.hpp"
#include "train/divergence_monitor.hpp"
#include "train/prototype_controller.hpp"
#include "train/step_policy.hpp"

namespace hpt::train {

class PrototypePolicy final : public StepPolicy {
 public:
  PrototypePolicy(const TrainState& state, const LrSchedule& schedule,
                  const PrototypeSchedule& settings, PrototypeRssm& rssm,
                  const MonitorThresholds& monitor = {});

  std::string name() const override;
  StepOutcome run(std::int64_t step, int batch_size) override;
  void after_step(std::int64_t step, StepOutcome& outcome, const View2<real>& features) override;
  void declare_state(StateRegistry& registry, const std::string& prefix) override;
  std::vector<std::pair<std::string, std::string>> report(double real_steps) const override;
  std::vector<std::pair<std::string, double>> counters() const override;

  const PrototypeController& controller() const { return controller_; }

 private:
  void decide(std::int64_t done);

  TrainState state_;
  LrSchedule schedule_;
  PrototypeSchedule settings_;
  PrototypeRssm& rssm_;
  PrototypeController controller_;
  DivergenceMonitor monitor_;
  LossEmas emas_;
  View1<real> x_;  // features after the newest real step (the state the forecaster sees)
  // The current block: its phase, steps left, length; the confidence of the decision;
  // the loss in the state (the previous step's); the predict block's mean loss path and its final
  // 2-sigma upper bound.
  Phase phase_ = Phase::Warmup;
  int left_ = 0, length_ = 0;
  int lead() const { return length_ - left_; }  // steps of the block run so far
  double confidence_, state_loss_, upper_ = 0;
  std::vector<double> path_;
  struct Counts {
    std::int64_t predict_blocks = 0, predicted_steps = 0, correct_steps = 0, warnings = 0,
                 criticals = 0;
  } counts_;
  double seconds_real_ = 0, seconds_forward_ = 0, seconds_decide_ = 0;  // fenced
};

}  // namespace hpt::train
