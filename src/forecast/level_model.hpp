#pragma once
// The learned level forecaster (docs/method.md#learned-level-forecast): three linear quantile
// regressions of the change of a run's level over h steps (the target's log loss minus `last`)
// on the features of forecast/level_features, pretrained on a corpus of curves (run.mode =
// pretrain) and shipped as a model file. The median is the point forecast; the 5 % and 95 %
// quantiles give a 90 % interval from a run's first forecast on.
#include <array>
#include <string>
#include <vector>

#include "forecast/curve.hpp"
#include "forecast/level_features.hpp"

namespace hpt::forecast {

struct LevelModel {
  static constexpr int kVersion = 1;
  // What it forecasts: the level h steps ahead (forecast.pretrained), or the level at the end of
  // the run from any origin, h being the steps left (forecast.final_model, the stop list's
  // question).
  enum class Target { kHorizons, kEnd };
  Target target = Target::kHorizons;
  // Weights of the features (kLevelFeatures each) for the 50 %, 5 % and 95 % quantiles.
  std::vector<double> median, q05, q95;
  // Where it came from (stored in the model file, printed when it is loaded).
  std::string corpus;
  long long runs = 0, samples = 0;
  std::vector<int> horizons;        // kHorizons: the horizons it was fitted at
  double end_from = 0, end_to = 0;  // kEnd: the fractions of a run's entries its origins spanned
  // Reweighting rounds each fit took (median, 5 %, 95 %); not stored in the file.
  std::array<int, 3> rounds{0, 0, 0};
  bool empty() const { return median.empty(); }
};

// The forecast of log loss at t + h and its 90 % interval, from the features of that horizon.
struct LevelForecast {
  double mid = 0, lo = 0, hi = 0;
  // P(log loss < b) under the two-piece normal with median `mid` whose 5 % and 95 % quantiles are
  // lo and hi (each half its own spread; a zero spread is a step).
  double probability_below(double b) const;
  // P(this log loss < the other's) for independent two-piece normals; an `other` without an
  // interval (lo or hi NaN, or no spread) is the point other.mid.
  double probability_below(const LevelForecast& other) const;
};
LevelForecast level_forecast(const LevelModel& model, const LevelFeatures& f);
// The forecast h steps after the history's origin, for any h >= 0 (beyond the fitted horizons the
// linear model extrapolates); within the target window's lead (h <= 4 steps) it is `last` exactly.
LevelForecast level_forecast_ahead(const LevelModel& model, const LevelHistory& hist,
                                   const std::vector<long long>& steps,
                                   const std::vector<double>& lr, long long h);

// One training example: the features at an origin and the change that followed.
struct LevelSample {
  LevelFeatures f;
  double change = 0;
  int horizon = 0;
};

struct LevelSampling {
  std::vector<int> horizons{10, 25, 50, 100, 200, 400};
  int every = 10;         // an origin every `every` entries of each run (of a densified run: the
                          // newest logged entry at or before it, each once)
  int first_origin = 20;  // entries of history at the first origin
  // Every `drop_lr_every`-th origin of a run is taken without its learning rates (0: never), so
  // that the model also serves runs whose files have no lr column.
  int drop_lr_every = 4;
  // to_end: one sample per origin, its target the run's final level (the log mean of its newest 10
  // losses, as the stop list scores runs), its horizon the steps left; origins from end_from to
  // end_to of the run's entries. `horizons` is then unused.
  bool to_end = false;
  double end_from = 0.05, end_to = 0.95;
};
std::vector<LevelSample> level_samples(const std::vector<Curve>& runs, const LevelSampling& s);

// The pinball loss is smoothed within this of zero residual (quadratic there): the objective is
// strictly convex with the ridge.
constexpr double kPinballKink = 1e-3;

// Quantile regression of the changes on the features (iteratively reweighted least squares of the
// pinball loss on standardised features, with a ridge penalty `ridge`), until the weights move by
// less than 1e-10 or after `iterations` rounds; `used`, when given, receives the rounds taken.
// It minimises sum_i rho(change_i - z_i . v) + ridge / 2 |v - c|^2 over the standardised weights v
// (z: each feature over its population std in the samples; rho: the smoothed pinball loss), with
// c = 0, or with `prior` (weights of the raw features) c = prior in standardised coordinates, the
// reweighting then starting from the prior's residuals (online fine-tuning,
// forecast/level_finetune.hpp).
std::vector<double> fit_quantile(const std::vector<LevelSample>& samples, double quantile,
                                 double ridge, int iterations, int* used = nullptr,
                                 const std::vector<double>* prior = nullptr);
LevelModel fit_level_model(const std::vector<LevelSample>& samples, double ridge, int iterations);

}  // namespace hpt::forecast
