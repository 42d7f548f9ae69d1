// The learned level forecaster's features against an independent NumPy implementation of their
// definitions (tests/data/level-features/make_reference.py wrote curves.csv and features.csv):
// three curves (logged every step, every 5 steps from step 3, from step 0 with a spike), histories
// from 1 entry to the whole curve, horizons 5 to 200, with and without the learning rates.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "forecast/level_features.hpp"
#include "io/curve_files.hpp"
#include "test_support.hpp"

namespace {

using hpt::forecast::kLevelFeatures;

struct ReferenceRow {
  std::string run;
  int n = 0, h = 0;
  bool with_lr = false;
  double last = 0;
  std::vector<double> x;
};

// features.csv: run (quoted, may hold a comma), n, h, with_lr, last, f0..f37.
std::vector<ReferenceRow> read_reference(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line;
  std::getline(in, line);  // header
  std::vector<ReferenceRow> rows;
  while (std::getline(in, line)) {
    ReferenceRow r;
    const std::size_t close = line.find('"', 1);
    r.run = line.substr(1, close - 1);
    std::istringstream rest(line.substr(close + 2));
    std::string cell;
    std::vector<double> v;
    while (std::getline(rest, cell, ',')) v.push_back(std::stod(cell));
    EXPECT_EQ(v.size(), std::size_t(4 + kLevelFeatures)) << line;
    r.n = int(v[0]), r.h = int(v[1]), r.with_lr = v[2] != 0, r.last = v[3];
    r.x.assign(v.begin() + 4, v.end());
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST(LevelFeatures, MatchAnIndependentImplementation) {
  const std::string dir = hpt::test::test_data_dir() + "/level-features";
  const hpt::forecast::CurveSet set = hpt::io::read_curves(dir + "/curves.csv", false);
  std::map<std::string, const hpt::forecast::Curve*> by_id;
  for (const auto& c : set.runs) by_id[c.id] = &c;
  const std::vector<ReferenceRow> rows = read_reference(dir + "/features.csv");
  ASSERT_GT(rows.size(), 200u);
  const std::vector<double> no_lr;
  for (const ReferenceRow& r : rows) {
    ASSERT_EQ(by_id.count(r.run), 1u) << r.run;
    const hpt::forecast::Curve& c = *by_id[r.run];
    const auto hist = hpt::forecast::level_history(c.steps, c.loss, r.n);
    const auto f = hpt::forecast::level_features(hist, c.steps, r.with_lr ? c.lr : no_lr, r.h);
    const std::string where = r.run + " n " + std::to_string(r.n) + " h " + std::to_string(r.h) +
                              (r.with_lr ? " with lr" : " without lr");
    EXPECT_NEAR(f.last, r.last, 1e-12) << where;
    for (int j = 0; j < kLevelFeatures; ++j)
      EXPECT_NEAR(f.x[std::size_t(j)], r.x[std::size_t(j)],
                  1e-9 * (1 + std::fabs(r.x[std::size_t(j)])))
          << where << ": feature " << j << " (" << hpt::forecast::kLevelFeatureNames[j] << ")";
  }
}

TEST(LevelFeatures, LearningRateFeaturesNeedTheWholeHorizon) {
  // A run whose lr series ends before t + h has no learning-rate features (has_lr = 0).
  std::vector<long long> steps;
  std::vector<double> loss, lr;
  for (int s = 1; s <= 100; ++s) steps.push_back(s), loss.push_back(1.0 / s), lr.push_back(0.1);
  const auto hist = hpt::forecast::level_history(steps, loss, 90);
  const auto inside = hpt::forecast::level_features(hist, steps, lr, 10);
  const auto beyond = hpt::forecast::level_features(hist, steps, lr, 11);
  EXPECT_EQ(inside.x[18], 1.0);
  EXPECT_EQ(beyond.x[18], 0.0);
  EXPECT_EQ(beyond.x[10], 0.0);
  EXPECT_EQ(beyond.x[13], 0.0);
}
