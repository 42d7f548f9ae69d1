// Forecasts of runs logged every few steps anchored at the logged loss
// (forecast/logged_anchor.hpp): given the exact log loss at the next logged step and at h, the
// anchored forecast equals the scored target (baselines' target_log_loss of the densified run, an
// independent computation) for windows before, across and after the origin; bounds stay ordered;
// runs logged every step and windows beyond the next logged step are never anchored.
#include <gtest/gtest.h>

#include <cmath>

#include "forecast/baselines.hpp"
#include "forecast/curve_densify.hpp"
#include "forecast/logged_anchor.hpp"

namespace {

using namespace hpt::forecast;

constexpr long long kEvery = 25;

// Logged every 25 steps from 0 to 300, a wiggling decay, densified; flat after step 200 so that a
// window past the next logged step has one exact value.
Curve logged_every_25() {
  Curve c;
  c.id = "val";
  for (long long s = 0; s <= 300; s += kEvery) {
    c.steps.push_back(s);
    const double t = double(std::min<long long>(s, 200));
    c.loss.push_back(2.0 * std::exp(-t / 120.0) + 0.1 + 0.05 * std::sin(t / 17.0));
  }
  return densified(c);
}

// The entries up to (and including) step g.
int entries_to(const Curve& c, long long g) {
  return int(g - c.steps.front() + 1);
}

double log_loss_at(const Curve& c, long long s) {
  return std::log(c.loss[std::size_t(s - c.steps.front())]);
}

TEST(LoggedAnchor, AnchorsOnlyWindowsThatStartBeforeTheNextLoggedStep) {
  Curve c = logged_every_25();
  EXPECT_TRUE(anchored_between_logs(c, 10));
  EXPECT_TRUE(anchored_between_logs(c, 28));   // window from origin + 24
  EXPECT_FALSE(anchored_between_logs(c, 29));  // window from origin + 25, the logged step
  EXPECT_FALSE(anchored_between_logs(c, 50));
  c.logged_every = 1;
  EXPECT_FALSE(anchored_between_logs(c, 10));
}

TEST(LoggedAnchor, ExactForecastsGiveTheTarget) {
  const Curve c = logged_every_25();
  ASSERT_EQ(c.logged_every, kEvery);
  for (long long g : {50LL, 100LL, 175LL})
    for (int h : {2, 10, 20, 28}) {
      const int n = entries_to(c, g);
      const double next = log_loss_at(c, g + kEvery);
      const double beyond = g + kEvery >= 200 ? log_loss_at(c, 200) : NAN;
      if (g + h + kTargetAfter > g + kEvery && std::isnan(beyond)) continue;  // not one value
      const LevelForecast at_next{next, next, next}, at_h{beyond, beyond, beyond};
      const LevelForecast f = anchor_to_logged(c, n, h, at_h, at_next);
      const double target = target_log_loss(c.steps, c.loss, g, h);
      ASSERT_TRUE(std::isfinite(target));
      EXPECT_NEAR(f.mid, target, 1e-12) << "origin " << g << ", h " << h;
    }
}

TEST(LoggedAnchor, BoundsStayOrderedAndNarrowTowardsTheOrigin) {
  const Curve c = logged_every_25();
  const int n = entries_to(c, 100);
  const double next = log_loss_at(c, 125);
  const LevelForecast at_next{next, next - 0.2, next + 0.3}, at_h{next, next - 0.2, next + 0.3};
  double width_before = 0;
  for (int h : {5, 10, 15, 20}) {
    const LevelForecast f = anchor_to_logged(c, n, h, at_h, at_next);
    EXPECT_LE(f.lo, f.mid);
    EXPECT_LE(f.mid, f.hi);
    EXPECT_GT(f.hi - f.lo, width_before);  // more of the window rests on the forecast
    EXPECT_LT(f.hi - f.lo, 0.5);
    width_before = f.hi - f.lo;
  }
}

}  // namespace
