// A run's validation losses as a curve of their own (forecast/validation_curve.hpp): one entry per
// step from the first validation step to the last, the validation losses kept exactly at their
// steps and marked logged, linear between them (checked against the line written out here), and
// the learning rate of every entry the run's own at that step, not an interpolation.
#include <gtest/gtest.h>

#include <cmath>

#include "forecast/validation_curve.hpp"

namespace {

using namespace hpt::forecast;

// A run of 300 steps with a step schedule (the rate halves at step 150) and a validation loss
// every 25 steps from step 25.
Curve run_with_validation(int points) {
  Curve c;
  c.id = "r";
  c.group = "g";
  c.split = "s";
  for (int s = 1; s <= 300; ++s) {
    c.steps.push_back(s);
    c.loss.push_back(1.0 / s);
    c.lr.push_back(s < 150 ? 0.1 : 0.05);
  }
  for (int k = 1; k <= points; ++k) {
    c.val_steps.push_back(25 * k);
    c.val_loss.push_back(2.0 + 0.1 * std::sin(double(k)));
  }
  return c;
}

TEST(ValidationCurve, IsReadStepByStepWithTheRunsOwnRates) {
  const Curve run = run_with_validation(12);
  Curve v;
  ASSERT_TRUE(validation_curve(run, v));
  EXPECT_EQ(v.id, "r/validation");
  EXPECT_EQ(v.group, "g");
  EXPECT_EQ(v.split, "s");
  EXPECT_EQ(v.logged_every, 25);
  ASSERT_EQ(v.steps.size(), std::size_t(300 - 25 + 1));
  ASSERT_EQ(v.lr.size(), v.steps.size());
  ASSERT_EQ(v.logged.size(), v.steps.size());
  for (std::size_t i = 0; i < v.steps.size(); ++i) {
    const long long s = 25 + static_cast<long long>(i);
    ASSERT_EQ(v.steps[i], s);
    EXPECT_EQ(v.lr[i], s < 150 ? 0.1 : 0.05) << "step " << s;
    const long long k = s / 25, r = s % 25;  // between validation points k and k + 1
    EXPECT_EQ(v.logged[i], r == 0 ? 1 : 0) << "step " << s;
    const double a = 2.0 + 0.1 * std::sin(double(k));
    const double expected =
        r == 0 ? a : a + (0.1 * std::sin(double(k + 1)) - 0.1 * std::sin(double(k))) * r / 25.0;
    EXPECT_NEAR(v.loss[i], expected, 1e-12) << "step " << s;
  }
}

TEST(ValidationCurve, TooFewValidationLossesMakeNoCurve) {
  Curve v;
  v.id = "untouched";
  EXPECT_FALSE(validation_curve(run_with_validation(int(kMinValidationPoints) - 1), v));
  EXPECT_EQ(v.id, "untouched");
  EXPECT_TRUE(validation_curve(run_with_validation(int(kMinValidationPoints)), v));
}

TEST(ValidationCurve, WithoutRatesHasNone) {
  Curve run = run_with_validation(12);
  run.lr.clear();
  Curve v;
  ASSERT_TRUE(validation_curve(run, v));
  EXPECT_TRUE(v.lr.empty());
  EXPECT_EQ(v.loss.size(), v.steps.size());
}

}  // namespace
