// Telemetry history (docs/method.md#telemetry): push_records against a host model of every run's
// sequences — ring contents by physical slot, head/count, oldest-first order across wrap-around,
// the scalar table, fresh runs and inactive records.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/telemetry_history.hpp"
#include "test_encode_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::TelemetryHistory;
using hpt::TelemetryRecord;
using hpt::test::HostRun;
namespace tm = hpt::telemetry;

template <class T>
class EncodeHistory : public ::testing::Test {};
TYPED_TEST_SUITE(EncodeHistory, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

template <class Real, class Mem>
struct HostCopy {
  typename hpt::View2<Real, Mem>::host_mirror_type loss;
  typename hpt::View3<Real, Mem>::host_mirror_type other;
  typename hpt::View2<int, Mem>::host_mirror_type head, count;
  typename hpt::View2<double, Mem>::host_mirror_type scalars;
  explicit HostCopy(const TelemetryHistory<Real, Mem>& h)
      : loss(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.loss)),
        other(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.other)),
        head(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.head)),
        count(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.count)),
        scalars(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.scalars)) {}
  double physical(int r, int series, int p) const {
    return series == tm::kLossSeries ? double(loss(r, p)) : double(other(r, series - 1, p));
  }
};

const std::vector<double>& sequence(const HostRun& run, int series) {
  switch (series) {
    case tm::kLossSeries:
      return run.loss;
    case tm::kGradSeries:
      return run.grad;
    case tm::kUpdateSeries:
      return run.update;
    case tm::kCosSeries:
      return run.cos;
    default:
      return run.weight;
  }
}

TYPED_TEST(EncodeHistory, RingSlotsHeadsAndOrderAfterWrapAround) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 rng(11);
  // Run 0 fresh, run 1 short, run 2 wraps the loss ring (cap 5) and the other rings (cap 3) often.
  const std::vector<int> lengths{0, 4, 23};
  auto history = hpt::create_history<Real, Mem>(3, 5, 3);
  std::vector<HostRun> host(3);
  hpt::test::push_steps<Space, Real>(history, hpt::test::random_steps(rng, lengths), host);
  HostCopy<Real, Mem> h(history);

  for (int r = 0; r < 3; ++r) {
    for (int series = 0; series < tm::kSeriesCount; ++series) {
      const std::vector<double>& seq = sequence(host[r], series);
      const int cap = series == tm::kLossSeries ? 5 : 3;
      const int pushed = int(seq.size());
      EXPECT_EQ(h.count(r, series), std::min(pushed, cap)) << "run " << r << " series " << series;
      EXPECT_EQ(h.head(r, series), pushed % cap) << "run " << r << " series " << series;
      // Physical slot p holds the newest pushed value with index = p (mod cap).
      for (int p = 0; p < std::min(pushed, cap); ++p) {
        int k = p;
        while (k + cap < pushed) k += cap;
        EXPECT_EQ(h.physical(r, series, p), seq[k]) << "run " << r << " series " << series;
      }
    }
  }
  // entry(i) walks the ring oldest first: the newest `cap` values of each sequence, in order.
  TelemetryHistory<Real, Kokkos::HostSpace> hh{h.loss, h.other, h.head, h.count, h.scalars};
  for (int r = 0; r < 3; ++r)
    for (int series = 0; series < tm::kSeriesCount; ++series) {
      const auto ring = HostRun::newest(sequence(host[r], series), hh.capacity(series));
      ASSERT_EQ(int(ring.size()), h.count(r, series));
      for (int i = 0; i < int(ring.size()); ++i)
        EXPECT_EQ(double(hh.entry(r, series, i)), ring[i]) << "run " << r << " series " << series;
    }
  // The long run really wrapped its rings.
  EXPECT_GT(host[2].loss.size(), 5u);
  EXPECT_GT(host[2].cos.size(), 3u);
}

TYPED_TEST(EncodeHistory, ScalarTableFollowsTheNewestRecords) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 rng(12);
  const std::vector<int> lengths{0, 1, 7, 40};
  auto history = hpt::create_history<Real, Mem>(4, 16, 8);
  std::vector<HostRun> host(4);
  hpt::test::push_steps<Space, Real>(history, hpt::test::random_steps(rng, lengths), host);
  HostCopy<Real, Mem> h(history);

  // A fresh run: NaN loss and gradient norm, everything else 0.
  EXPECT_TRUE(std::isnan(h.scalars(0, tm::kLoss)));
  EXPECT_TRUE(std::isnan(h.scalars(0, tm::kGradNorm)));
  for (int c = 0; c < tm::kScalarCount; ++c)
    if (c != tm::kLoss && c != tm::kGradNorm) {
      EXPECT_EQ(h.scalars(0, c), 0.0) << "column " << c;
    }

  for (int r = 1; r < 4; ++r) {
    const HostRun& run = host[r];
    const TelemetryRecord& t = run.last;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double loss = nan, grad = nan, upd = 0.0, wn = 0.0, cs = 0.0;
    EXPECT_EQ(h.scalars(r, tm::kRecordCount), double(run.records));
    EXPECT_EQ(h.scalars(r, tm::kStep), double(t.step));
    EXPECT_EQ(h.scalars(r, tm::kPhase), double(t.phase));
    EXPECT_EQ(h.scalars(r, tm::kStepsInPhase), double(t.steps_in_phase));
    EXPECT_EQ(h.scalars(r, tm::kLr), t.lr);
    EXPECT_EQ(h.scalars(r, tm::kEffectiveLr), t.effective_lr);
    EXPECT_EQ(h.scalars(r, tm::kMomentMean), t.moment_mean);
    EXPECT_EQ(h.scalars(r, tm::kMomentStd), t.moment_std);
    EXPECT_EQ(h.scalars(r, tm::kVarianceMean), t.variance_mean);
    EXPECT_EQ(h.scalars(r, tm::kVarianceStd), t.variance_std);
    EXPECT_EQ(h.scalars(r, tm::kBeta1Pow), t.beta1_pow);
    EXPECT_EQ(h.scalars(r, tm::kBeta2Pow), t.beta2_pow);
    EXPECT_EQ(h.scalars(r, tm::kPredictedFrac), t.predicted_frac);
    EXPECT_EQ(h.scalars(r, tm::kHasForecastError), run.has_forecast_error ? 1.0 : 0.0);
    EXPECT_EQ(h.scalars(r, tm::kForecastError), run.forecast_error);
    EXPECT_EQ(h.scalars(r, tm::kGradTensorLogStd), run.grad_tensor_log_std);
    EXPECT_EQ(h.scalars(r, tm::kGradTensorLogRange), run.grad_tensor_log_range);
    // Newest values as rounded in the rings, compared after rounding the scalar the same way.
    if (!run.loss.empty()) loss = run.loss.back();
    if (!run.grad.empty()) grad = run.grad.back();
    if (!run.update.empty()) upd = run.update.back(), wn = run.weight.back();
    if (!run.cos.empty()) cs = run.cos.back();
    auto rounded = [](double v) { return hpt::test::as_stored<Real>(v); };
    EXPECT_TRUE(hpt::test::near_rel(rounded(h.scalars(r, tm::kLoss)), loss, 0.0)) << "run " << r;
    EXPECT_TRUE(hpt::test::near_rel(rounded(h.scalars(r, tm::kGradNorm)), grad, 0.0)) << r;
    EXPECT_EQ(rounded(h.scalars(r, tm::kUpdateNorm)), upd) << "run " << r;
    EXPECT_EQ(rounded(h.scalars(r, tm::kWeightNorm)), wn) << "run " << r;
    EXPECT_EQ(rounded(h.scalars(r, tm::kUpdateCos)), cs) << "run " << r;
    const std::size_t nv = run.val.size();
    EXPECT_EQ(h.scalars(r, tm::kValCount), double(nv)) << "run " << r;
    EXPECT_EQ(h.scalars(r, tm::kValLoss), nv >= 1 ? run.val[nv - 1] : 0.0) << "run " << r;
    EXPECT_EQ(h.scalars(r, tm::kValLossPrev), nv >= 2 ? run.val[nv - 2] : 0.0) << "run " << r;
  }
}

TYPED_TEST(EncodeHistory, InactiveRecordsLeaveTheRunUntouched) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 rng(13);
  auto history = hpt::create_history<Real, Mem>(2, 8, 4);
  std::vector<HostRun> host(2);
  auto steps = hpt::test::random_steps(rng, {6, 6});
  hpt::test::push_steps<Space, Real>(history, steps, host);
  HostCopy<Real, Mem> before(history);
  // Run 1 gets an inactive record with every flag set: nothing may change for it.
  std::vector<std::vector<TelemetryRecord>> more(1, std::vector<TelemetryRecord>(2));
  more[0][0] = hpt::test::random_record(rng, 0, 6);
  more[0][1] = hpt::test::random_record(rng, 1, 6);
  more[0][1].has_loss = more[0][1].has_grad = more[0][1].has_update = true;
  more[0][1].active = false;
  hpt::test::push_steps<Space, Real>(history, more, host);
  HostCopy<Real, Mem> after(history);
  for (int c = 0; c < tm::kScalarCount; ++c)
    EXPECT_TRUE(hpt::test::near_rel(after.scalars(1, c), before.scalars(1, c), 0.0)) << c;
  for (int s = 0; s < tm::kSeriesCount; ++s) {
    EXPECT_EQ(after.count(1, s), before.count(1, s));
    EXPECT_EQ(after.head(1, s), before.head(1, s));
  }
  EXPECT_EQ(after.scalars(0, tm::kRecordCount), 7.0);
}

}  // namespace
