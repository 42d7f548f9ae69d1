#pragma once
// Forecasters of the loss curves of R runs walked forward together (run.mode = forecast). A
// forecaster follows every run step by step (observe), may learn from what it has seen (train),
// and at an origin forecasts, for each active run and horizon h, the log of the mean loss over the
// steps h-4 .. h+5 after the origin (the scoring target of forecast/baselines.hpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/types.hpp"
#include "kernels/ensemble_rollout_batched.hpp"
#include "kernels/latent_filter.hpp"
#include "kernels/rollout_statistics.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"
#include "physics-style-modules/dynamics/rssm_multi_run.hpp"

namespace hpt::forecast {

// The encoder's state of all R runs at the origin.
struct CurveState {
  View2<real> features;                 // (R, I) as encoded
  View1<LossState<real>> loss_states;   // (R)
  View2<real> norm_mean, norm_inv_std;  // (R, I)
  View1<int> active;                    // (R) 1 for runs that have a record at this step
  View1<real> log_loss;                 // (R) log loss of the step (active runs)
  std::vector<int> active_host;         // (R) host copy of `active`
};

// Per run r and horizon index k (entry r * K + k): statistics of the forecast log window loss.
// NaN for runs that were not active. `paths_last`: per run its P sample values of the largest
// horizon (entry r * P + p), for probabilities.
struct CurveForecast {
  int runs = 0, horizons = 0, paths = 0;
  std::vector<double> mean, q05, q50, q95;
  std::vector<double> paths_last;
};

class CurveForecaster {
 public:
  virtual ~CurveForecaster() = default;
  // One step of every run: the newly encoded state (active(r) = 0: run r did not move).
  virtual void observe(const CurveState& state) = 0;
  // Learning from the transitions observed so far; returns the number of optimizer updates made.
  virtual int train() = 0;
  virtual CurveForecast forecast(const CurveState& state) = 0;
};

// The RSSM ensemble: latents (R, E, H) filtered with the real features every step (one GRU step per
// member), forecasts from a batched rollout of N scenarios per member and run, summarised with the
// rollout statistics (quantiles of the window mean loss over the N*E paths, mean of its log). The
// shared ensemble is trained online on every run's transitions (RssmMultiRunTrainer): each
// train() makes up to `train_runs` BPTT + Adam updates, one per run, round robin.
class RssmCurveForecaster final : public CurveForecaster {
 public:
  RssmCurveForecaster(RssmDynamics& dynamics, int runs, int scenarios, std::vector<int> horizons,
                      std::uint64_t seed, FeatureUpdate feature_update, double clamp,
                      const RssmTrainOptions& training, int train_runs);
  void observe(const CurveState& state) override;
  int train() override;
  CurveForecast forecast(const CurveState& state) override;
  long long updates() const { return trainer_.updates(); }

  int rollout_horizon() const { return settings_.horizon; }
  // Member-steps of one forecast (for throughput figures).
  double member_steps_per_forecast(int active_runs) const;

 private:
  RssmDynamics& dynamics_;
  RssmMultiRunTrainer trainer_;
  int train_runs_;
  int runs_;
  std::vector<int> horizons_;
  RolloutSettings settings_;
  View3<real> latents_;  // (R, E, H)
  LatentFilterWork<real> filter_work_;
  View4<real> paths_;    // (R, N, E, Y+1)
  View4<real> windows_;  // (R, N, E, K)
  View1<int> horizons_device_;
  RolloutStatistics<real> stats_;
};

}  // namespace hpt::forecast
