#pragma once
// `train.hybrid = on`: the hybrid loop. Real steps (Warmup, Full, Correct blocks) train as usual
// and are shown to the update predictor; at the end of each such block the loop takes a snapshot of
// the parameters and optimizer state and asks the forecaster whether a predict block is safe: the
// largest horizon Y (of forecast.horizons, at most the controller's cap) whose calibrated forecast
// of log L has std <= predict.confidence x the forecast improvement and whose realised coverage is
// at least predict.min_coverage. A predict block then advances the parameters Y steps by the update
// predictor, without backward passes, and is verified on a fixed probe set of validation rows:
// kept when the probe loss is at most (1 + tol) x and at most exp(forecast 95 % bound - current
// level) x the probe loss before the block, otherwise rolled back to the snapshot. The divergence
// monitor watches every step: a warning forces a longer Full block (ending a predict block by a
// rollback), a critical alarm or a non-finite value restores the snapshot and halves the learning
// rate for a while. docs/method.md describes the loop.
#include <memory>
#include <string>
#include <vector>

#include "physics-style-modules/update/update_predictor.hpp"
#include "train/checkpoint.hpp"
#include "train/divergence_monitor.hpp"
#include "train/hybrid_settings.hpp"
#include "train/phase_controller.hpp"
#include "train/step_policy.hpp"
#include "train/training_snapshot.hpp"

namespace hpt::train {

class HybridPolicy final : public StepPolicy {
 public:
  // `state.forecaster` must be set; the predictor is bound here to the model's parameters.
  HybridPolicy(const TrainState& state, const LrSchedule& schedule, const HybridSettings& settings,
               std::unique_ptr<UpdatePredictor> predictor, std::int64_t total_steps);

  std::string name() const override;
  StepOutcome run(std::int64_t step, int batch_size) override;
  void after_step(std::int64_t step, StepOutcome& outcome, const View2<real>& features) override;
  void declare_state(StateRegistry& registry, const std::string& prefix) override;
  void after_load() override;
  std::vector<std::pair<std::string, std::string>> report(double real_steps) const override;
  std::vector<std::pair<std::string, double>> counters() const override;

  const PhaseController& controller() const { return controller_; }

 private:
  void decide(std::int64_t step, const View2<real>& features);
  void finish_block(std::int64_t step, StepOutcome& outcome);
  void restore_after_alarm(std::int64_t step, double loss, const std::string& why);
  void warn(std::int64_t step, double loss, const std::string& reason);
  double probe_loss();
  double scale_block_motion();
  int phase_code() const;

  TrainState state_;
  LrSchedule schedule_;
  HybridSettings settings_;
  std::unique_ptr<UpdatePredictor> predictor_;
  std::int64_t total_steps_;
  PhaseController controller_;
  TrainingSnapshot snapshot_;
  DivergenceMonitor monitor_;
  // The current block: probe loss before it, the accept ratio bound, its forecast (mean and 95 %
  // bound of log L at the horizon), the mean log-loss path for the monitor, the last decision's
  // std / improvement.
  double probe_before_ = 0, bound_ratio_ = 0, block_mean_ = 0, block_hi_ = 0, confidence_ = 0;
  Kokkos::View<double*, Kokkos::HostSpace> block_path_;
  View1<real> block_end_;  // parameters at a block's end, while its step scales are tried
  double last_scale_ = 1.0;
  std::int64_t last_warning_ = -(std::int64_t(1) << 40);  // console only: not part of the state
  // Seconds (fenced): real steps, predicted updates, probe evaluations, entry decisions.
  double seconds_real_ = 0, seconds_predict_ = 0, seconds_verify_ = 0, seconds_decide_ = 0;
};

}  // namespace hpt::train
