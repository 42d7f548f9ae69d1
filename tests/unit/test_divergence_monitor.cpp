// The divergence monitor (train/divergence_monitor.hpp): each signal at each of its thresholds, the
// escalation of repeated warnings, and that non-finite values are critical and never enter the
// statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "train/divergence_monitor.hpp"

namespace {

using hpt::train::Alarm;
using hpt::train::DivergenceMonitor;
using hpt::train::MonitorThresholds;
using hpt::train::StepSignals;

StepSignals step(double loss, double grad = std::numeric_limits<double>::quiet_NaN()) {
  StepSignals s;
  s.loss = loss;
  s.has_grad = !std::isnan(grad);
  s.grad_norm = grad;
  return s;
}

// A monitor that has seen `n` steps of a loss switching between 1 + a and 1 - a every three steps
// (a known variance, few enough sign flips not to read as oscillation) and a gradient norm of 1.
DivergenceMonitor warmed(int n, double a, const MonitorThresholds& t = {}) {
  DivergenceMonitor m(t);
  for (int i = 0; i < n; ++i) m.observe(step(1.0 + ((i % 6 < 3) ? a : -a), 1.0));
  return m;
}

TEST(DivergenceMonitor, LossDeviationThresholds) {
  const auto m0 = warmed(400, 0.01);
  const double sd = std::sqrt(m0.state().loss_var), ema = m0.state().loss_ema;
  const std::pair<double, Alarm> cases[] = {
      {1.5, Alarm::Normal}, {2.5, Alarm::Caution}, {4.0, Alarm::Warning}, {7.0, Alarm::Critical}};
  for (const auto& [k, level] : cases) {
    auto m = m0;
    EXPECT_EQ(m.observe(step(ema + k * sd, 1.0)).level, level) << k << " sigma";
  }
}

TEST(DivergenceMonitor, GradientExplosionAndVanishing) {
  const auto m0 = warmed(100, 0.01);
  const double b = m0.state().grad_baseline;
  EXPECT_NEAR(b, 1.0, 1e-12);
  const double loss = m0.state().loss_ema;
  auto m = m0;
  EXPECT_EQ(m.observe(step(loss, 50.0)).level, Alarm::Normal);
  m = m0;
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Warning);
  m = m0;
  EXPECT_EQ(m.observe(step(loss, 2000.0)).level, Alarm::Critical);
  m = m0;
  EXPECT_EQ(m.observe(step(loss, 0.005)).level, Alarm::Warning);
  m = m0;
  EXPECT_EQ(m.observe(step(loss)).level, Alarm::Normal) << "a step without a gradient";
}

TEST(DivergenceMonitor, NonFiniteIsCriticalAndNotLearned) {
  auto m = warmed(100, 0.01);
  const auto before = m.state();
  EXPECT_EQ(m.observe(step(std::nan(""), 1.0)).level, Alarm::Critical);
  EXPECT_EQ(m.observe(step(1.0, std::numeric_limits<double>::infinity())).level, Alarm::Critical);
  EXPECT_EQ(m.state().loss_ema, before.loss_ema);
  EXPECT_EQ(m.state().grad_ema, before.grad_ema);
  EXPECT_EQ(m.state().observations, before.observations);
}

TEST(DivergenceMonitor, ForecastErrorAgainstTheRealisedLoss) {
  const auto m0 = warmed(400, 0.01);
  const double loss = m0.state().loss_ema;
  // A named array: nvcc 11.8 cannot deduce a range-for over a braced list of pairs.
  const std::pair<double, Alarm> cases[] = {
      {loss * 1.1, Alarm::Normal}, {loss * 1.3, Alarm::Caution}, {loss * 1.6, Alarm::Warning}};
  for (const auto& [forecast, level] : cases) {
    auto m = m0;
    StepSignals s = step(loss, 1.0);
    s.has_forecast = true;
    s.forecast = forecast;
    EXPECT_EQ(m.observe(s).level, level) << forecast;
  }
}

TEST(DivergenceMonitor, OscillationOfTheLoss) {
  DivergenceMonitor m;
  Alarm last = Alarm::Normal;
  for (int i = 0; i < 60; ++i) last = m.observe(step(i % 2 ? 1.0 : 1.001, 1.0)).level;
  EXPECT_GE(last, Alarm::Warning);  // every difference flips sign
  DivergenceMonitor calm;
  for (int i = 0; i < 60; ++i) last = calm.observe(step(2.0 - 0.001 * i, 1.0)).level;
  EXPECT_EQ(last, Alarm::Normal);  // a steady decrease
}

TEST(DivergenceMonitor, ThreeWarningsInARowEscalate) {
  auto m = warmed(100, 0.01);
  const double loss = m.state().loss_ema;
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Warning);
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Warning);
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Critical);
  auto n = warmed(100, 0.01);
  n.observe(step(loss, 200.0));
  n.observe(step(loss, 200.0));
  n.observe(step(loss, 1.0));  // a normal check resets the count
  EXPECT_EQ(n.observe(step(loss, 200.0)).level, Alarm::Warning);
}

// A vanishing gradient (converging, not diverging) warns every time but never escalates; a cleared
// count (after a restore) needs three divergent warnings again.
TEST(DivergenceMonitor, VanishingGradientNeverEscalatesAndClearingRestartsTheCount) {
  auto m = warmed(100, 0.01);
  const double loss = m.state().loss_ema;
  for (int i = 0; i < 6; ++i) {
    const auto v = m.observe(step(loss, 1e-4));
    EXPECT_EQ(v.level, Alarm::Warning) << i;
    EXPECT_FALSE(v.divergent);
  }
  m.observe(step(loss, 200.0));
  m.observe(step(loss, 200.0));
  m.clear_escalation();
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Warning);
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Warning);
  EXPECT_EQ(m.observe(step(loss, 200.0)).level, Alarm::Critical);
}

// Configured thresholds (monitor.*): each level moves with its threshold. The deviation is measured
// here from the monitor's own statistics, the levels from the rule in the header.
TEST(DivergenceMonitor, ConfiguredLossDeviationThreshold) {
  MonitorThresholds t;
  t.sigma = 10.0;
  const auto m0 = warmed(400, 0.01, t);
  const double sd = std::sqrt(m0.state().loss_var), ema = m0.state().loss_ema;
  const std::pair<double, Alarm> cases[] = {{6.5, Alarm::Normal},
                                            {8.0, Alarm::Caution},
                                            {12.0, Alarm::Warning},
                                            {19.0, Alarm::Warning},
                                            {21.0, Alarm::Critical}};
  for (const auto& [k, level] : cases) {
    auto m = m0;
    EXPECT_EQ(m.observe(step(ema + k * sd, 1.0)).level, level) << k << " sigma";
  }
}

TEST(DivergenceMonitor, ConfiguredGradientThresholds) {
  MonitorThresholds t;
  t.grad_explode = 1000.0;
  t.grad_vanish = 0.0;  // off
  const auto m0 = warmed(100, 0.01, t);
  const double loss = m0.state().loss_ema;
  const std::pair<double, Alarm> cases[] = {{200.0, Alarm::Normal},
                                            {2000.0, Alarm::Warning},
                                            {20000.0, Alarm::Critical},
                                            {1e-9, Alarm::Normal}};
  for (const auto& [g, level] : cases) {
    auto m = m0;
    EXPECT_EQ(m.observe(step(loss, g)).level, level) << "gradient norm " << g;
  }
  t.grad_vanish = 0.1;
  auto m = warmed(100, 0.01, t);
  EXPECT_EQ(m.observe(step(loss, 0.05)).level, Alarm::Warning);
}

TEST(DivergenceMonitor, ConfiguredEscalation) {
  for (const int n : {0, 1, 5}) {
    MonitorThresholds t;
    t.escalate_after = n;
    auto m = warmed(100, 0.01, t);
    const double loss = m.state().loss_ema;
    for (int i = 1; i <= 8; ++i) {
      const Alarm expected = n > 0 && i >= n ? Alarm::Critical : Alarm::Warning;
      EXPECT_EQ(m.observe(step(loss, 200.0)).level, expected)
          << "escalate_after " << n << ", " << i << " warnings";
    }
  }
}

}  // namespace
