#include "forecast/logged_anchor.hpp"

#include <algorithm>
#include <cmath>

#include "forecast/baselines.hpp"

namespace hpt::forecast {

bool anchored_between_logs(const Curve& run, int h) {
  return run.logged_every > 1 && h - kTargetBefore < run.logged_every;
}

namespace {

// The run's loss at step s <= origin (densified: one entry per step), else the origin's loss
// (before the run's first step or across a gap left sparse).
double loss_at_or_origin(const Curve& run, int n, long long s, double at_origin) {
  const long long i = n - 1 - (run.steps[std::size_t(n - 1)] - s);
  return i >= 0 && run.steps[std::size_t(i)] == s ? run.loss[std::size_t(i)] : at_origin;
}

// Log of the window's mean loss given log forecasts at the next logged step and at h.
double anchored_log(const Curve& run, int n, int h, double log_next, double log_h) {
  const long long g = run.steps[std::size_t(n - 1)], every = run.logged_every;
  const double at_origin = run.loss[std::size_t(n - 1)];
  double sum = 0;
  int count = 0;
  for (long long s = g + h - kTargetBefore; s <= g + h + kTargetAfter; ++s, ++count) {
    if (s <= g)
      sum += loss_at_or_origin(run, n, s, at_origin);
    else if (s - g <= every)
      sum += at_origin + double(s - g) / double(every) * (std::exp(log_next) - at_origin);
    else
      sum += std::exp(log_h);
  }
  return std::log(std::max(sum / count, kMinLoss));
}

}  // namespace

LevelForecast anchor_to_logged(const Curve& run, int n, int h, const LevelForecast& at_h,
                               const LevelForecast& at_next) {
  LevelForecast out;
  out.mid = anchored_log(run, n, h, at_next.mid, at_h.mid);
  out.lo = anchored_log(run, n, h, at_next.lo, at_h.lo);
  out.hi = anchored_log(run, n, h, at_next.hi, at_h.hi);
  return out;
}

}  // namespace hpt::forecast
