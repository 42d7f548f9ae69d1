#include "forecast/power_guard.hpp"

#include <limits>

#include "forecast/logged_anchor.hpp"

namespace hpt::forecast {

double power_guard(const Curve& run, const PowerLaw& fit, int n, int h) {
  if (!fit.ok || !(fit.b > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double at_h = forecast_power(fit, run.steps, run.loss, n, h);
  if (!anchored_between_logs(run, h)) return at_h;
  const double at_next = forecast_power(fit, run.steps, run.loss, n, int(run.logged_every));
  return anchor_to_logged(run, n, h, {at_h, at_h, at_h}, {at_next, at_next, at_next}).mid;
}

}  // namespace hpt::forecast
