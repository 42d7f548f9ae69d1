#pragma once
// Forecasts of a run's validation loss (docs/method.md#validation-loss): validation losses come at
// their own steps (every few dozen or hundred training steps), smooth, and form a curve of their
// own (forecast/validation_curve.hpp) that the learned level forecaster was pretrained on, so the
// forecast is that forecaster's of the validation curve; a run with too few validation losses yet
// has its validation level moved by the change foreseen for its training level instead.
#include <limits>

#include "forecast/curve.hpp"
#include "forecast/level_features.hpp"
#include "forecast/level_model.hpp"

namespace hpt::forecast {

constexpr int kValidationPoints = 3;  // the validation level: log mean of the newest this many
// Entries of a validation curve (read step by step) up to the origin that its learned forecast
// needs: as many as the pretraining's first origin has.
constexpr int kMinValidationHistory = 20;

// The log mean of the newest kValidationPoints validation losses at steps <= t (NaN if none).
double validation_level(const Curve& c, long long t);

// The first validation step >= t (-1 if none).
long long validation_step_at_or_after(const Curve& c, long long t);

// A forecast of the validation loss recorded at `val_step`, made at origin t.
struct ValidationForecast {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  long long val_step = -1;
  double level = kNaN;  // validation_level at t: the `last` forecast of the validation loss
  double mid = kNaN, lo = kNaN, hi = kNaN;
  double raw_lo = kNaN, raw_hi = kNaN;  // the interval before forecast mode's online calibration
  double target = kNaN;  // log of the validation loss at val_step (NaN if the run has none there)
};

// A run's validation curve (made by validation_curve) at origin t: the history of its entries up to
// its newest validation loss at or before t; usable once there are kMinValidationHistory of them.
struct ValidationHistory {
  const Curve* curve = nullptr;  // null: not usable (too few entries, or no curve)
  LevelHistory hist;
  bool usable() const { return curve != nullptr; }
};
// `val` may be empty (a run with too few validation losses); it must outlive the result.
ValidationHistory validation_history(const Curve& val, long long t);

// The forecast of the first validation point at or after t + h of run `c`, whose training history
// up to t is `hist`: where `val` (its validation curve at t) is usable, the learned level forecast
// of that curve from its newest validation loss at or before t to that point's step; else the
// validation level at t plus the learned change of the training level over the same steps (median
// and 90 % interval). Undefined (val_step -1) without validation losses before t and after t + h,
// or without a model.
ValidationForecast forecast_validation(const Curve& c, const ValidationHistory& val,
                                       const LevelModel& model, const LevelHistory& hist, int h);

// The forecast of the validation level at step `end` (the run's or its group's last step), by the
// same rule.
LevelForecast final_validation(const Curve& c, const ValidationHistory& val,
                               const LevelModel& model, const LevelHistory& hist, long long end);

}  // namespace hpt::forecast
