// `encoder = prototype` (docs/method.md#prototype-encoder) against a plain host implementation of
// the table written here: every index, on random histories of R = 1, 3 and 257 runs (short, exactly
// full and wrapped rings), a fresh run (NaN current loss), NaNs inside the history, fewer than 32
// losses, empty buffers.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/encode_prototype.hpp"
#include "test_encode_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::TelemetryRecord;
using hpt::test::HostRun;

template <class T>
class EncodePrototype : public ::testing::Test {};
TYPED_TEST_SUITE(EncodePrototype, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The host reference of the parity encoder (docs/method.md#prototype-encoder).
using hpt::reference::host_prototype;

::testing::AssertionResult same_value(double got, double want, double tol) {
  if (std::isnan(want) || std::isinf(want)) {
    if ((std::isnan(want) && std::isnan(got)) || got == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got << " vs reference " << want;
  }
  return hpt::test::near_rel(got, want, tol);
}

// Pushes `steps`, encodes on the device and compares every feature of every run with the host.
template <class Space, class Real>
void check_against_host(const std::vector<std::vector<TelemetryRecord>>& steps, int runs,
                        int loss_cap, int grad_cap) {
  using Mem = typename Space::memory_space;
  auto history = hpt::create_history<Real, Mem>(runs, loss_cap, grad_cap);
  std::vector<HostRun> host(runs);
  hpt::test::push_steps<Space, Real>(history, steps, host);
  hpt::View2<Real, Mem> features("features", runs, hpt::kFeatures);
  Kokkos::deep_copy(features, Real(-777));  // every entry must be written
  hpt::encode_prototype(Space(), history, features);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
  const double tol = hpt::test::tolerance<Real>(loss_cap);
  for (int r = 0; r < runs; ++r) {
    const auto want = host_prototype(host[r], loss_cap, grad_cap);
    for (int f = 0; f < hpt::kFeatures; ++f)
      EXPECT_TRUE(same_value(double(x(r, f)), double(Real(want[f])), tol))
          << "run " << r << " feature " << f << " (" << host[r].loss.size() << " losses)";
  }
}

TYPED_TEST(EncodePrototype, SingleRunMatchesHostAtEveryLength) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(21);
  // Lengths around the 32-loss rule and the capacities 256 / 64 (exactly full and wrapped).
  for (int length : {0, 1, 2, 31, 32, 33, 64, 65, 256, 300})
    check_against_host<Space, Real>(hpt::test::random_steps(rng, {length}), 1, 256, 64);
}

TYPED_TEST(EncodePrototype, BatchedRunsWithDifferentHistories) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(22);
  check_against_host<Space, Real>(hpt::test::random_steps(rng, {5, 40, 270}), 3, 256, 64);
  std::vector<int> lengths(257);
  std::uniform_int_distribution<int> len(0, 120);
  for (int& l : lengths) l = len(rng);
  lengths[7] = 0;
  lengths[100] = 120;
  // Small capacities so that most runs wrap.
  check_against_host<Space, Real>(hpt::test::random_steps(rng, lengths), 257, 48, 16);
}

TYPED_TEST(EncodePrototype, FreshRunGivesNaNLossAndPrototypeDefaults) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  auto history = hpt::create_history<Real, Mem>(1, 256, 64);
  hpt::View2<Real, Mem> features("features", 1, hpt::kFeatures);
  hpt::encode_prototype(Space(), history, features);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
  EXPECT_TRUE(std::isnan(x(0, 0)));  // current loss of a fresh state
  EXPECT_TRUE(std::isnan(x(0, 8)));  // current gradient norm
  for (int f : {1, 2, 3, 4, 9, 10, 11, 12}) EXPECT_EQ(x(0, f), Real(0)) << f;  // empty buffers
  EXPECT_EQ(x(0, 5), Real(0));
  EXPECT_EQ(x(0, 6), Real(1));
  EXPECT_EQ(x(0, 13), Real(-10));  // fmax(log10 NaN, -10)
  EXPECT_EQ(x(0, 14), Real(10));   // fmin(NaN / eps, 10)
  EXPECT_EQ(x(0, 15), Real(0));    // std / max(mean, eps) of an empty history
  EXPECT_EQ(x(0, 20), Real(-10));  // log10 of a zero effective lr
  for (int f = 23; f < hpt::kFeatures; ++f) EXPECT_EQ(x(0, f), Real(0)) << f;
}

TYPED_TEST(EncodePrototype, NaNInsideTheHistory) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 rng(23);
  // Run 0: a few NaN losses and gradient norms among finite ones; run 1: every loss NaN.
  auto steps = hpt::test::random_steps(rng, {50, 20});
  for (int t : {3, 17, 49}) {
    steps[t][0].has_loss = true;
    steps[t][0].loss = kNaN;
    steps[t][0].has_grad = true;
    steps[t][0].grad_norm = kNaN;
  }
  for (int t = 0; t < 20; ++t) {
    steps[t][1].has_loss = true;
    steps[t][1].loss = kNaN;
  }
  check_against_host<Space, Real>(steps, 2, 256, 64);
  // And the properties themselves, independent of the host reference.
  using Mem = typename Space::memory_space;
  auto history = hpt::create_history<Real, Mem>(2, 256, 64);
  std::vector<HostRun> host(2);
  hpt::test::push_steps<Space, Real>(history, steps, host);
  hpt::View2<Real, Mem> features("features", 2, hpt::kFeatures);
  hpt::encode_prototype(Space(), history, features);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
  EXPECT_TRUE(std::isnan(x(0, 1)));                               // mean propagates NaN
  EXPECT_TRUE(std::isfinite(x(0, 3)) && std::isfinite(x(0, 4)));  // min/max ignore NaN
  EXPECT_LE(x(0, 3), x(0, 4));
  EXPECT_TRUE(std::isfinite(x(0, 11)) && std::isfinite(x(0, 12)));
  EXPECT_TRUE(std::isnan(x(1, 3)) && std::isnan(x(1, 4)));  // every entry NaN
}

TYPED_TEST(EncodePrototype, TrendNeedsThirtyTwoLosses) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  // Decreasing losses L_k = 100 - k: with 32 or more, the newest 16 average 16 below the previous
  // 16 (trend -16, ratio mean new / mean old); with 31 the prototype's defaults 0 and 1.
  for (int n : {31, 32, 40}) {
    std::vector<std::vector<TelemetryRecord>> steps(n, std::vector<TelemetryRecord>(1));
    for (int k = 0; k < n; ++k) {
      steps[k][0].has_loss = true;
      steps[k][0].loss = 100.0 - k;
    }
    auto history = hpt::create_history<Real, Mem>(1, 256, 64);
    std::vector<HostRun> host(1);
    hpt::test::push_steps<Space, Real>(history, steps, host);
    hpt::View2<Real, Mem> features("features", 1, hpt::kFeatures);
    hpt::encode_prototype(Space(), history, features);
    auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
    if (n < 32) {
      EXPECT_EQ(x(0, 5), Real(0));
      EXPECT_EQ(x(0, 6), Real(1));
    } else {
      const double newest = 100.0 - (n - 1) + 7.5, previous = newest + 16.0;
      EXPECT_TRUE(hpt::test::near_rel(x(0, 5), -16.0, hpt::test::tolerance<Real>(32)));
      EXPECT_TRUE(hpt::test::near_rel(x(0, 6), newest / previous, hpt::test::tolerance<Real>(32)));
    }
  }
}

}  // namespace
