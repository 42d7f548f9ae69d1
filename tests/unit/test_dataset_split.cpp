// The train/validation split (every row exactly once, seeded), the device copies of each part and
// the standardisation with train statistics, against host computations written here.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "physics-style-modules/dataset/dataset.hpp"
#include "test_support.hpp"

namespace {

// Random rows: column c ~ N(mean_c, scale_c), the last column constant; labels cycle over 3
// classes.
hpt::RawData random_rows(std::int64_t rows, int features, unsigned seed, bool regression = false) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  hpt::RawData d;
  d.rows = rows;
  d.features = features;
  d.source = "test";
  d.x.resize(std::size_t(rows * features));
  for (std::int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < features; ++c)
      d.x[r * features + c] = c == features - 1 ? 2.5 : 3.0 * c - 1.0 + (0.5 + c) * normal(gen);
  if (regression) {
    d.task = hpt::Task::Regression;
    d.outputs = 2;
    for (std::int64_t i = 0; i < rows * 2; ++i) d.targets.push_back(normal(gen));
  } else {
    d.task = hpt::Task::Classification;
    d.outputs = 3;
    for (std::int64_t r = 0; r < rows; ++r) d.labels.push_back(int((r * 7) % 3));
  }
  return d;
}

template <class View>
auto on_host(const View& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

hpt::DatasetOptions options(double val_fraction, bool standardize, std::uint64_t seed) {
  hpt::DatasetOptions o;
  o.val_fraction = val_fraction;
  o.standardize = standardize;
  o.seed = seed;
  return o;
}

}  // namespace

TEST(DatasetSplit, SizesAndEveryRowExactlyOnce) {
  for (double frac : {0.0, 0.2, 0.5}) {
    const auto raw = random_rows(1001, 4, 1);
    hpt::Dataset ds("test", raw, options(frac, false, 5));
    const std::int64_t n_val = std::llround(frac * 1001);
    EXPECT_EQ(ds.val_size(), n_val);
    EXPECT_EQ(ds.train_size(), 1001 - n_val);
    std::vector<int> seen(1001, 0);
    for (auto r : ds.train_rows()) ++seen.at(std::size_t(r));
    for (auto r : ds.val_rows()) ++seen.at(std::size_t(r));
    for (int s : seen) ASSERT_EQ(s, 1);
    EXPECT_EQ(ds.x_val().extent(0), std::size_t(n_val));
    EXPECT_EQ(ds.labels_train().extent(0), std::size_t(1001 - n_val));
  }
  // At least one training row is always kept.
  hpt::Dataset tiny("test", random_rows(2, 3, 1), options(0.9, false, 1));
  EXPECT_EQ(tiny.train_size(), 1);
  EXPECT_EQ(tiny.val_size(), 1);
}

TEST(DatasetSplit, SeededSplitIsReproducibleAndSeedDependent) {
  const auto raw = random_rows(500, 3, 2);
  hpt::Dataset a("test", raw, options(0.2, false, 1)), b("test", raw, options(0.2, false, 1));
  hpt::Dataset c("test", raw, options(0.2, false, 2));
  EXPECT_EQ(a.val_rows(), b.val_rows());
  EXPECT_NE(a.val_rows(), c.val_rows());
  // The held-out rows are spread over the file, not a block at one end.
  EXPECT_LT(a.val_rows().front(), 50);
  EXPECT_GT(a.val_rows().back(), 450);
}

TEST(DatasetSplit, DeviceRowsAreTheListedRawRows) {
  for (bool regression : {false, true}) {
    const auto raw = random_rows(300, 5, 3, regression);
    hpt::Dataset ds("test", raw, options(0.25, false, 9));
    const auto xt = on_host(ds.x_train()), xv = on_host(ds.x_val());
    const auto lt = on_host(ds.labels_train());
    const auto tv = on_host(ds.targets_val());
    for (std::size_t r = 0; r < ds.train_rows().size(); ++r) {
      const auto src = std::size_t(ds.train_rows()[r]);
      for (int c = 0; c < 5; ++c) ASSERT_EQ(xt(r, c), hpt::real(raw.x[src * 5 + c]));
      if (!regression) {
        ASSERT_EQ(lt(r), raw.labels[src]);
      }
    }
    for (std::size_t r = 0; r < ds.val_rows().size(); ++r) {
      const auto src = std::size_t(ds.val_rows()[r]);
      for (int c = 0; c < 5; ++c) ASSERT_EQ(xv(r, c), hpt::real(raw.x[src * 5 + c]));
      if (regression) {
        for (int k = 0; k < 2; ++k) ASSERT_EQ(tv(r, k), hpt::real(raw.targets[src * 2 + k]));
      }
    }
  }
}

TEST(DatasetSplit, StandardisationUsesTrainStatistics) {
  const int f = 6;
  const auto raw = random_rows(800, f, 4);
  hpt::Dataset ds("test", raw, options(0.2, true, 3));
  const double n_train = double(ds.train_size());
  const double tol = hpt::test::tolerance<hpt::real>(n_train);

  // Reference statistics from the train rows, in double, here.
  std::vector<double> mean(f, 0.0), stdev(f, 0.0);
  for (auto r : ds.train_rows())
    for (int c = 0; c < f; ++c) mean[c] += raw.x[r * f + c] / n_train;
  for (auto r : ds.train_rows())
    for (int c = 0; c < f; ++c) stdev[c] += std::pow(raw.x[r * f + c] - mean[c], 2) / n_train;
  for (int c = 0; c < f; ++c) stdev[c] = std::sqrt(stdev[c]);
  ASSERT_EQ(stdev[f - 1], 0.0);  // the constant column
  for (int c = 0; c < f; ++c) {
    EXPECT_TRUE(hpt::test::near_rel(ds.feature_mean()[c], mean[c], 1e-12));
    EXPECT_TRUE(hpt::test::near_rel(ds.feature_std()[c], c == f - 1 ? 1.0 : stdev[c], 1e-12));
  }

  // Train columns: mean 0, std 1 (the constant column: all 0).
  const auto xt = on_host(ds.x_train());
  for (int c = 0; c < f; ++c) {
    double m = 0, s = 0;
    for (std::size_t r = 0; r < xt.extent(0); ++r) m += xt(r, c) / n_train;
    for (std::size_t r = 0; r < xt.extent(0); ++r) s += std::pow(xt(r, c) - m, 2) / n_train;
    EXPECT_NEAR(m, 0.0, tol) << "column " << c;
    EXPECT_NEAR(std::sqrt(s), c == f - 1 ? 0.0 : 1.0, tol) << "column " << c;
  }
  // Validation rows: transformed with the train statistics (not their own).
  const auto xv = on_host(ds.x_val());
  double val_mean0 = 0;
  for (std::size_t r = 0; r < xv.extent(0); ++r) {
    const auto src = ds.val_rows()[r];
    for (int c = 0; c < f; ++c) {
      const double want = (raw.x[src * f + c] - mean[c]) / (c == f - 1 ? 1.0 : stdev[c]);
      ASSERT_TRUE(hpt::test::near_rel(xv(r, c), want, hpt::test::tolerance<hpt::real>()));
    }
    val_mean0 += xv(r, 0) / double(xv.extent(0));
  }
  EXPECT_GT(std::fabs(val_mean0), 1e-4);  // own statistics would give 0 up to rounding
}

TEST(DatasetSplit, ProbePartIsDisjointAndLeavesValidationUnchanged) {
  const auto raw = random_rows(1000, 4, 6);
  hpt::Dataset plain("test", raw, options(0.2, false, 7));
  auto with_probe = options(0.2, false, 7);
  with_probe.probe_fraction = 0.15;
  hpt::Dataset ds("test", raw, with_probe);
  EXPECT_EQ(ds.val_size(), 200);
  EXPECT_EQ(ds.probe_size(), 150);
  EXPECT_EQ(ds.train_size(), 650);
  EXPECT_EQ(ds.size(), 1000);
  EXPECT_EQ(plain.probe_size(), 0);
  // The reported validation rows do not depend on the probe part; the probe rows come from what was
  // the training part.
  EXPECT_EQ(ds.val_rows(), plain.val_rows());
  const std::set<std::int64_t> before(plain.train_rows().begin(), plain.train_rows().end());
  std::vector<int> seen(1000, 0);
  for (auto r : ds.train_rows()) ++seen.at(std::size_t(r));
  for (auto r : ds.val_rows()) ++seen.at(std::size_t(r));
  for (auto r : ds.probe_rows()) {
    ++seen.at(std::size_t(r));
    EXPECT_EQ(before.count(r), 1u) << "probe row " << r;
  }
  for (int s : seen) ASSERT_EQ(s, 1);
  // Device rows of the probe part are the listed raw rows.
  const auto xp = on_host(ds.x_probe());
  const auto lp = on_host(ds.labels_probe());
  ASSERT_EQ(xp.extent(0), std::size_t(150));
  for (std::size_t r = 0; r < ds.probe_rows().size(); ++r) {
    const auto src = std::size_t(ds.probe_rows()[r]);
    for (int c = 0; c < 4; ++c) ASSERT_EQ(xp(r, c), hpt::real(raw.x[src * 4 + c]));
    ASSERT_EQ(lp(r), raw.labels[src]);
  }
}
