// A run recorded at every step, as a script logging every K steps would have written it
// (forecast/logged_every_curve.hpp): the entries at the multiples of K and the last step kept
// exactly and marked logged, every step between them on the straight line through its two logged
// neighbours (written out here), the rates likewise, and no copy of a run that is itself sparse.
#include <gtest/gtest.h>

#include <cmath>

#include "forecast/curve_densify.hpp"
#include "forecast/logged_every_curve.hpp"

namespace {

using namespace hpt::forecast;

// A run at steps 1 .. n with a noisy loss and a rate that halves at step 150.
Curve dense_run(int n) {
  Curve c;
  c.id = "r";
  c.group = "g";
  c.split = "s";
  for (int s = 1; s <= n; ++s) {
    c.steps.push_back(s);
    c.loss.push_back(1.0 / s + 0.01 * std::sin(3.0 * s));
    c.lr.push_back(s < 150 ? 0.1 : 0.05);
  }
  return c;
}

// The value at step s of the line through (a, f(a)) and (b, f(b)).
template <class F>
double on_line(long long a, long long b, long long s, F f) {
  return f(a) + (f(b) - f(a)) * double(s - a) / double(b - a);
}

TEST(LoggedEveryCurve, KeepsTheMultiplesAndTheLastStepJoinedByLines) {
  const Curve run = dense_run(510);
  Curve c;
  ASSERT_TRUE(logged_every_curve(run, 50, c));
  EXPECT_EQ(c.id, "r/every-50");
  EXPECT_EQ(c.group, "g");
  EXPECT_EQ(c.split, "s");
  // Logged: 50, 100, ..., 500 and the last step 510.
  ASSERT_EQ(c.steps.front(), 50);
  ASSERT_EQ(c.steps.back(), 510);
  ASSERT_EQ(c.steps.size(), std::size_t(510 - 50 + 1));
  ASSERT_EQ(c.logged.size(), c.steps.size());
  ASSERT_EQ(c.lr.size(), c.steps.size());
  const auto loss = [&](long long s) { return run.loss[std::size_t(s - 1)]; };
  const auto lr = [&](long long s) { return run.lr[std::size_t(s - 1)]; };
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const long long s = c.steps[i];
    ASSERT_EQ(s, 50 + static_cast<long long>(i));
    const bool logged = s % 50 == 0 || s == 510;
    EXPECT_EQ(c.logged[i], logged ? 1 : 0) << "step " << s;
    const long long a = s >= 500 ? 500 : s / 50 * 50;
    const long long b = s >= 500 ? 510 : a + 50;
    const double want = logged ? loss(s) : on_line(a, b, s, loss);
    EXPECT_NEAR(c.loss[i], want, 1e-12) << "step " << s;
    EXPECT_NEAR(c.lr[i], logged ? lr(s) : on_line(a, b, s, lr), 1e-12) << "step " << s;
  }
}

TEST(LoggedEveryCurve, TooFewLoggedEntriesMakeNoCopy) {
  Curve c;
  c.id = "untouched";
  // Steps 1 .. 499 keep 50 .. 450 and 499: 10 entries; steps 1 .. 449 keep 9.
  EXPECT_FALSE(logged_every_curve(dense_run(449), 50, c));
  EXPECT_EQ(c.id, "untouched");
  EXPECT_TRUE(logged_every_curve(dense_run(499), 50, c));
  EXPECT_EQ(c.id, "r/every-50");
}

TEST(LoggedEveryCurve, ASparseRunHasNoCopy) {
  Curve sparse = dense_run(600);
  Curve c;
  ASSERT_TRUE(logged_every_curve(sparse, 10, c));  // densified: entries filled in are marked
  c.id = "untouched";
  Curve again = c;
  EXPECT_FALSE(logged_every_curve(again, 50, c));
  EXPECT_EQ(c.id, "untouched");
  Curve gaps = dense_run(600);  // a gap of 5 steps after the 300th entry
  for (std::size_t i = 300; i < gaps.steps.size(); ++i) gaps.steps[i] += 5;
  EXPECT_FALSE(logged_every_curve(gaps, 50, c));
  EXPECT_FALSE(logged_every_curve(dense_run(600), 1, c));
}

}  // namespace
