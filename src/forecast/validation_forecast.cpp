#include "forecast/validation_forecast.hpp"

#include <algorithm>
#include <cmath>

#include "forecast/baselines.hpp"

namespace hpt::forecast {

double validation_level(const Curve& c, long long t) {
  const auto end = std::upper_bound(c.val_steps.begin(), c.val_steps.end(), t);
  const int n = int(end - c.val_steps.begin());
  if (n == 0) return ValidationForecast::kNaN;
  double sum = 0;
  for (int i = std::max(0, n - kValidationPoints); i < n; ++i)
    sum += std::max(c.val_loss[std::size_t(i)], kMinLoss);
  return std::log(std::max(sum / double(std::min(n, kValidationPoints)), kMinLoss));
}

long long validation_step_at_or_after(const Curve& c, long long t) {
  const auto it = std::lower_bound(c.val_steps.begin(), c.val_steps.end(), t);
  return it == c.val_steps.end() ? -1 : *it;
}

namespace {

// The learned change of the training level from the origin to h steps ahead, added to `level`.
LevelForecast moved(const Curve& c, const LevelModel& model, const LevelHistory& hist, long long h,
                    double level) {
  const LevelForecast train = level_forecast_ahead(model, hist, c.steps, c.lr, h);
  return {level + train.mid - hist.last, level + train.lo - hist.last,
          level + train.hi - hist.last};
}

// The forecast of the validation level at step `at` by the rule of forecast_validation.
LevelForecast validation_at_step(const Curve& c, const ValidationHistory& val,
                                 const LevelModel& model, const LevelHistory& hist, long long at,
                                 double level) {
  if (!val.usable()) return moved(c, model, hist, at - hist.t, level);
  return level_forecast_ahead(model, val.hist, val.curve->steps, val.curve->lr, at - val.hist.t);
}

}  // namespace

ValidationHistory validation_history(const Curve& val, long long t) {
  ValidationHistory out;
  const int n = val.steps.empty() ? 0 : logged_upto(val, entries_upto(val, t));
  if (n < kMinValidationHistory) return out;
  out.curve = &val;
  out.hist = level_history(val.steps, val.loss, n);
  return out;
}

ValidationForecast forecast_validation(const Curve& c, const ValidationHistory& val,
                                       const LevelModel& model, const LevelHistory& hist, int h) {
  ValidationForecast f;
  const double level = validation_level(c, hist.t);
  const long long at = validation_step_at_or_after(c, hist.t + h);
  if (model.empty() || std::isnan(level) || at < 0) return f;
  f.val_step = at;
  f.level = level;
  const LevelForecast m = validation_at_step(c, val, model, hist, at, level);
  f.mid = m.mid, f.lo = m.lo, f.hi = m.hi;
  f.target = std::log(std::max(validation_at(c, at), kMinLoss));
  return f;
}

LevelForecast final_validation(const Curve& c, const ValidationHistory& val,
                               const LevelModel& model, const LevelHistory& hist, long long end) {
  return validation_at_step(c, val, model, hist, end, validation_level(c, hist.t));
}

}  // namespace hpt::forecast
