// `power` as the combined forecast's guard (forecast/power_guard.hpp): the power law's forecast
// where the law decays; no forecast (NaN) for a loss that rises (the constrained fit is flat) or a
// history too short to fit; on a run logged every 25 steps, a horizon inside the logging interval
// is the window mean of the line from the logged loss to the law's value at the next logged step,
// computed here by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "forecast/baselines.hpp"
#include "forecast/curve_densify.hpp"
#include "forecast/power_guard.hpp"

namespace {

using namespace hpt::forecast;

Curve every_step(double (*loss)(double), long long last) {
  Curve c;
  c.id = "run";
  for (long long s = 0; s <= last; ++s) {
    c.steps.push_back(s);
    c.loss.push_back(loss(double(s)));
  }
  return c;
}

double decaying(double s) {
  return 0.5 + 2.0 * std::pow(s + 1.0, -0.7);
}
double rising(double s) {
  return 1.0 + 0.001 * s;
}

TEST(PowerGuard, WhereTheLawDecaysItIsThePowerForecast) {
  const Curve c = every_step(decaying, 399);
  const int n = 400;
  const PowerLaw fit = fit_power_history(c.steps, c.loss, n);
  ASSERT_TRUE(fit.ok);
  ASSERT_GT(fit.b, 0.0);
  for (int h : {10, 100, 400})
    EXPECT_EQ(power_guard(c, fit, n, h), forecast_power(fit, c.steps, c.loss, n, h));
}

TEST(PowerGuard, ALossThatRisesOrAShortHistoryGivesNoForecast) {
  const Curve up = every_step(rising, 399);
  const PowerLaw flat = fit_power_history(up.steps, up.loss, 400);
  ASSERT_TRUE(flat.ok);
  EXPECT_EQ(flat.b, 0.0);  // the constrained fit of a rise: a constant
  EXPECT_TRUE(std::isfinite(forecast_power(flat, up.steps, up.loss, 400, 50)));
  EXPECT_TRUE(std::isnan(power_guard(up, flat, 400, 50)));
  const Curve c = every_step(decaying, 399);
  const PowerLaw short_fit = fit_power_history(c.steps, c.loss, 50);  // two blocks of 20
  ASSERT_FALSE(short_fit.ok);
  EXPECT_TRUE(std::isnan(power_guard(c, short_fit, 50, 10)));
}

TEST(PowerGuard, InsideTheLoggingIntervalItIsDrawnFromTheLoggedLoss) {
  Curve logged;
  logged.id = "val";
  for (long long s = 0; s <= 400; s += 25) {
    logged.steps.push_back(s);
    logged.loss.push_back(decaying(double(s)));
  }
  const Curve c = densified(logged);
  ASSERT_EQ(c.logged_every, 25);
  const long long origin = 200;
  const int n = int(origin + 1);  // entries 0 .. 200
  const PowerLaw fit = fit_power_history(c.steps, c.loss, n);
  ASSERT_TRUE(fit.ok && fit.b > 0);
  const double at_origin = decaying(double(origin));
  const double next = std::exp(forecast_power(fit, c.steps, c.loss, n, 25));
  // h = 10: the window origin + 6 .. origin + 15 lies on the line; its mean is at 10.5 / 25.
  const double expected = std::log(at_origin + (next - at_origin) * 10.5 / 25.0);
  EXPECT_NEAR(power_guard(c, fit, n, 10), expected, 1e-12);
  EXPECT_GT(std::fabs(power_guard(c, fit, n, 10) - forecast_power(fit, c.steps, c.loss, n, 10)),
            1e-4);  // the anchoring moves it
  // h = 50: past the next logged step, the law's own forecast.
  EXPECT_EQ(power_guard(c, fit, n, 50), forecast_power(fit, c.steps, c.loss, n, 50));
}

}  // namespace
