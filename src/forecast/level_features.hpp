#pragma once
// The inputs of the learned level forecaster (docs/method.md#learned-level-forecast): what a run's
// history and its planned learning rates say about the change of its level (the log of the mean
// loss over a target window) from now to h steps ahead. Every feature is scale-free (differences
// of log losses, ratios of learning rates, logs of steps), so that one model serves runs of any
// problem. The list is fixed: a model file names it, and a model made for another list is refused.
#include <array>
#include <vector>

#include "forecast/baselines.hpp"

namespace hpt::forecast {

constexpr int kLevelFeatures = 38;
extern const char* const kLevelFeatureNames[kLevelFeatures];

// The parts of the features that do not depend on the horizon, from the first n entries.
struct LevelHistory {
  int n = 0;
  long long t = 0, first_step = 0;             // the origin step and the run's first step
  double last = 0;                             // `last`: log mean of the newest 10 losses
  double mean20 = 0, mean50 = 0, mean200 = 0;  // log mean of the newest 20 / 50 / 200 losses
  double slope50 = 0, slope200 = 0;  // per step: newest 50 (200) against the 50 (200) before
  // d log loss / d log step over the newest half, the whole history and the newest quarter
  double log_step_slope = 0, log_step_slope_all = 0, log_step_slope_quarter = 0;
  // std of the step-to-step change of log loss / sqrt 2 over the newest 51 and 201 entries
  double noise = 0, noise200 = 0;
  double above_best = 0;  // last minus the lowest block mean of 10 so far
  // last minus the lowest mean of 10 consecutive entries (blocks counted back from the newest)
  // within the newest 50, 100 and 200 entries: how far the level sits above its recent low
  double above_recent50 = 0, above_recent100 = 0, above_recent200 = 0;
  LogLinLine loglin;  // `loglin`'s line at the origin
  // How far the log loss has fallen in one straight line: persistence of `loglin`'s slope against
  // the slope of the same fit over the newest 400 steps, in [0, 1]
  double straight = 0;
  // How well `loglin` would have forecast this run's own recent levels L = 50 (200) steps ahead,
  // against `last`: e_last² / (e_last² + e_loglin²) over four recent backtest origins, in [0, 1]
  double skill50 = 0, skill200 = 0;
};
LevelHistory level_history(const std::vector<long long>& steps, const std::vector<double>& loss,
                           int n);

struct LevelFeatures {
  std::array<double, kLevelFeatures> x{};
  double last = 0;  // the level the change is added to
};

// The features for horizon h. `lr` is the run's whole learning-rate series (future entries
// included: a trainer knows its schedule) or empty; the learning-rate features are zero and
// `has_lr` is 0 when it is empty or does not reach step t + h.
LevelFeatures level_features(const LevelHistory& hist, const std::vector<long long>& steps,
                             const std::vector<double>& lr, int h);

}  // namespace hpt::forecast
