#pragma once
// The forecaster inside a training run (`train.forecaster = on`): after every real step the RSSM
// ensemble filters its latents with the step's features and makes one online training step
// (truncated BPTT + Adam); every `forecast.every` steps it forecasts the log of the mean loss over
// steps h-4 .. h+5 after the origin, for each horizon h of `forecast.horizons`, from a rollout of
// `forecast.scenarios` paths per member. The 90 % interval is calibrated online per horizon
// (adaptive conformal inference) and scored when its target has been trained through: realised
// coverage and error per horizon go to the trace and the summary. Its whole state is part of the
// run's checkpoints.
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "forecast/adaptive_conformal.hpp"
#include "forecast/level_model.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"
#include "physics-style-modules/encoder/encoder.hpp"
#include "train/state_registry.hpp"

namespace hpt::train {

struct TrainingForecastSettings {
  std::vector<int> horizons{10, 50, 100, 200};
  int every = 50;
  int scenarios = 16;
  std::uint64_t seed = 1;
  forecast::CalibrationRule calibration_rule = forecast::CalibrationRule::kQuantile;
  double calibration_rate = 0.05;
  int calibration_window = 200;
  // train.forecast_style = learned: the pretrained level forecaster (forecast/level_model.hpp)
  // forecasts instead of the RSSM ensemble, which then neither filters, trains nor rolls out;
  // planned_lr[s] is the schedule's learning rate of step s (its features look ahead).
  forecast::LevelModel level_model;
  std::vector<double> planned_lr;
  bool learned() const { return !level_model.empty(); }
};

// One scored forecast: made at `origin` for horizon `horizon`, resolved at `resolved`.
struct ForecastRow {
  std::int64_t origin = 0, horizon = 0, resolved = 0;
  double mean = 0, q05 = 0, q50 = 0, q95 = 0;  // calibrated, log loss
  double target = 0;                           // realised log of the window mean loss
  int inside = 0;
  double width_factor = 1;  // the calibration's factor when it was made
};

// A forecast made now for one horizon: raw mean of the paths' log window loss, calibrated 90 %
// interval (lo = 5 %, hi = 95 % bound, mid = median), and how that horizon's past forecasts fared.
struct HorizonForecast {
  int horizon = 0;
  double mean = 0, lo = 0, mid = 0, hi = 0;
  long long scored = 0;
  double coverage = 0;      // realised coverage of the scored forecasts (NaN before the first)
  double width_factor = 1;  // the calibration's factor applied to the raw interval
  double raw_q05 = 0, raw_q95 = 0;  // the rollout's own 5 % and 95 % quantiles
};

// Forecasts at every horizon from the current state, the mean log loss along the paths per lead
// (entry j = j steps ahead) and the current level (log of the mean of the newest 10 losses).
struct ForecastNow {
  std::vector<HorizonForecast> horizons;
  std::vector<double> mean_log_path;
  double level = 0;
};

// Per horizon: forecasts scored, mean |error| (log loss), fraction inside the 90 % interval.
struct HorizonScore {
  int horizon = 0;
  long long scored = 0;
  double mean_abs_error = 0, coverage = 0;
};

class TrainingForecaster {
 public:
  TrainingForecaster(RssmDynamics& dynamics, Encoder& encoder,
                     const TrainingForecastSettings& settings);

  // After real step `step` with minibatch loss `loss`: features (1, I) are this step's encoding,
  // history the run's telemetry (for the loss state the rollout continues).
  void after_step(std::int64_t step, double loss, const View2<real>& features,
                  const TelemetryHistory<real>& history);
  // After a step without a backward pass: its loss (NaN when none was measured) joins the log the
  // forecasts are scored against; the ensemble neither filters nor trains on it.
  void log_loss(std::int64_t step, double loss);
  // Forecasts from the state after step `step` (not scored; for the hybrid loop's decisions).
  ForecastNow forecast_now(std::int64_t step, const View2<real>& features,
                           const TelemetryHistory<real>& history);
  // Real steps the ensemble has trained on; it forecasts once it has seen one BPTT window.
  bool trained() const;
  // The forecasts scored since the last call.
  std::vector<ForecastRow> take_scored();
  std::vector<HorizonScore> scores() const;

  // Every buffer and counter of its state under `prefix` ("forecaster/").
  void declare_state(StateRegistry& registry, const std::string& prefix);

  // Seconds spent, fenced: filtering the latents, online training, forecasts (rollouts).
  double seconds_filter = 0, seconds_train = 0, seconds_forecast = 0;

 private:
  void forecast_at(std::int64_t step, const View2<real>& features,
                   const TelemetryHistory<real>& history);
  ForecastNow compute(std::int64_t step, const View2<real>& features,
                      const TelemetryHistory<real>& history);
  ForecastNow compute_learned(std::int64_t step) const;
  HorizonForecast horizon_forecast(const forecast::AdaptiveConformal& cal, std::size_t k,
                                   double mean, double raw_q05, double q50, double raw_q95) const;
  void score_due(std::int64_t step);
  double window_log_loss(std::int64_t first, std::int64_t last) const;  // NaN if not all logged

  RssmDynamics& dynamics_;
  Encoder& encoder_;
  TrainingForecastSettings settings_;
  forecast::AdaptiveConformal fresh_calibration() const;
  forecast::AdaptiveConformal calibration() const;  // from calibration_state_
  void store(const forecast::AdaptiveConformal& c);

  RolloutSettings rollout_;
  RolloutOutputs<real> out_;
  View1<LossState<real>> loss_states_;
  // Host state saved in checkpoints: the newest losses (ring by step), pending forecasts (one row
  // per slot: origin, k, mean, raw q05, q50, raw q95 and the width factor the interval was issued
  // with; origin < 0 = free), the calibration (which also counts the scored targets and hits).
  Kokkos::View<double*, Kokkos::HostSpace> loss_log_;
  Kokkos::View<double**, Kokkos::HostSpace> pending_;
  Kokkos::View<double**, Kokkos::HostSpace> calibration_state_;  // (K, state size) per horizon
  Kokkos::View<double*, Kokkos::HostSpace> error_sums_;  // (K): sum of |error| of the scored
  std::vector<ForecastRow> scored_;
  // train.forecast_style = learned: the newest 65536 steps' losses (NaN where none was measured),
  // a ring by step.
  Kokkos::View<double*, Kokkos::HostSpace> step_losses_;
  Kokkos::View<double*, Kokkos::HostSpace> learned_seen_;  // (1): losses logged so far
  double planned_lr(std::int64_t step) const;
};

}  // namespace hpt::train
