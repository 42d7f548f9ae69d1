// Curves logged every few steps read step by step (forecast/curve_densify.hpp): the logged values
// kept exactly, the loss and the learning rate linear between them (checked against the
// straight line written out here), the logged entries marked, and a run logged every step left as
// it is.
#include <gtest/gtest.h>

#include <cmath>

#include "forecast/curve_densify.hpp"

namespace {

using namespace hpt::forecast;

Curve every_ten() {
  Curve c;
  c.id = "sparse";
  for (int i = 1; i <= 5; ++i) {
    c.steps.push_back(10 * i);
    c.loss.push_back(std::exp(-0.3 * i));
    c.lr.push_back(0.1 / i);
  }
  c.steps.push_back(57);  // an irregular last entry
  c.loss.push_back(0.2);
  c.lr.push_back(0.01);
  return c;
}

TEST(CurveDensify, TheLoggingIntervalIsTheMedianSpacing) {
  EXPECT_EQ(logging_interval(every_ten()), 10);
  Curve one;
  one.steps = {3};
  EXPECT_EQ(logging_interval(one), 1);
}

TEST(CurveDensify, FillsEveryStepLinearlyAndKeepsTheLoggedValues) {
  const Curve c = every_ten();
  const Curve d = densified(c);
  ASSERT_EQ(d.steps.size(), std::size_t(57 - 10 + 1));
  ASSERT_EQ(d.loss.size(), d.steps.size());
  ASSERT_EQ(d.lr.size(), d.steps.size());
  EXPECT_TRUE(d.grad_norm.empty());
  for (std::size_t i = 0; i < d.steps.size(); ++i) EXPECT_EQ(d.steps[i], 10 + long(i));
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const std::size_t at = std::size_t(c.steps[j] - 10);
    EXPECT_EQ(d.loss[at], c.loss[j]);
    EXPECT_TRUE(logged_entry(d, int(at)));
  }
  int logged = 0;
  for (std::size_t i = 0; i < d.steps.size(); ++i) logged += logged_entry(d, int(i));
  EXPECT_EQ(logged, 6);
  for (std::size_t j = 1; j < c.steps.size(); ++j)
    for (long long s = c.steps[j - 1] + 1; s < c.steps[j]; ++s) {
      const double f = double(s - c.steps[j - 1]) / double(c.steps[j] - c.steps[j - 1]);
      const std::size_t at = std::size_t(s - 10);
      EXPECT_NEAR(d.loss[at], c.loss[j - 1] + f * (c.loss[j] - c.loss[j - 1]), 1e-15);
      EXPECT_NEAR(d.lr[at], c.lr[j - 1] + f * (c.lr[j] - c.lr[j - 1]), 1e-15);
    }
  EXPECT_EQ(first_logged_from(d, 31), 40);
  EXPECT_EQ(first_logged_from(d, 40), 40);
  EXPECT_EQ(first_logged_from(c, 31), 31);  // every entry logged: the step itself
}

TEST(CurveDensify, OriginsAreLoggedEntriesAtOrAfterAMultipleOfEvery) {
  Curve c;
  for (long long s = 49; s <= 249; s += 50) {  // logged at 49, 99, ..., off the grid of 50
    c.steps.push_back(s);
    c.loss.push_back(1.0 / double(s));
  }
  const Curve d = densified(c);
  EXPECT_EQ(d.logged_every, 50);
  std::vector<long long> every50, every10;
  for (int i = 0; i < int(d.steps.size()); ++i) {
    if (origin_entry(d, i, 50)) every50.push_back(d.steps[std::size_t(i)]);
    if (origin_entry(d, i, 10)) every10.push_back(d.steps[std::size_t(i)]);
  }
  EXPECT_EQ(every50, (std::vector<long long>{99, 149, 199, 249}));
  EXPECT_EQ(every10, (std::vector<long long>{99, 149, 199, 249}));
  // A run logged every step: the multiples of `every`, as always.
  Curve dense;
  for (long long s = 1; s <= 30; ++s) dense.steps.push_back(s), dense.loss.push_back(1.0);
  for (int i = 0; i < 30; ++i)
    EXPECT_EQ(origin_entry(dense, i, 10), dense.steps[std::size_t(i)] % 10 == 0);
  // The history up to the newest logged entry: among the first 60 entries (steps 49 .. 108) the
  // newest logged one is step 99, entry 51.
  EXPECT_EQ(logged_upto(d, 60), 51);
  EXPECT_EQ(logged_upto(d, 51), 51);
  EXPECT_EQ(logged_upto(dense, 7), 7);
}

TEST(CurveDensify, AGapWiderThanTheLimitIsLeftUnfilled) {
  Curve c;
  for (long long s = 10; s <= 100; s += 10) c.steps.push_back(s), c.loss.push_back(1.0);
  c.steps.push_back(100000000);  // resumed much later
  c.loss.push_back(0.5);
  const Curve d = densified(c);
  ASSERT_EQ(d.steps.size(), std::size_t(91 + 1));
  EXPECT_EQ(d.steps.back(), 100000000);
  EXPECT_EQ(d.loss.back(), 0.5);
  EXPECT_TRUE(logged_entry(d, int(d.steps.size()) - 1));
  EXPECT_TRUE(logged_entry(d, int(d.steps.size()) - 2));  // step 100
}

TEST(CurveDensify, OnlySparseRunsAreDensifiedWithOneNote) {
  CurveSet set;
  Curve dense;
  dense.id = "dense";
  for (int s = 1; s <= 30; ++s) {
    dense.steps.push_back(s);
    dense.loss.push_back(1.0 / s);
  }
  Curve far;
  far.id = "far";
  far.steps = {1000, 2000, 3000};
  far.loss = {1.0, 0.5, 0.25};
  set.runs = {dense, every_ten(), far};
  densify_sparse_runs(set);
  EXPECT_EQ(set.runs[0].steps, dense.steps);
  EXPECT_TRUE(set.runs[0].logged.empty());
  EXPECT_EQ(set.runs[1].steps.size(), std::size_t(48));
  EXPECT_EQ(set.runs[2].steps, far.steps);  // beyond kMaxDensifyInterval: left as it is
  ASSERT_EQ(set.notes.size(), std::size_t(2));
  EXPECT_NE(set.notes[0].find("1 runs are logged every 10 steps"), std::string::npos);
  EXPECT_NE(set.notes[1].find("1 runs are logged more than 100 steps apart"), std::string::npos);
}

}  // namespace
