// Update predictors (physics-style-modules/update) against host loops written here: linear and
// quadratic finite-difference extrapolation of snapshots, the frozen style, the geometric fit of
// `extrapolate`, which must recover an exactly geometric update sequence, and the discounted
// least-squares line of `trend` against the normal equations solved on the host.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "kernels/parameter_store.hpp"
#include "physics-style-modules/update/anchored_differences.hpp"
#include "physics-style-modules/update/discounted_trend.hpp"
#include "physics-style-modules/update/extrapolate.hpp"
#include "physics-style-modules/update/finite_difference.hpp"
#include "physics-style-modules/update/frozen.hpp"
#include "physics-style-modules/update/register.hpp"
#include "test_support.hpp"

namespace {

using Vec = std::vector<double>;

template <class C>
class UpdatePredictors : public ::testing::Test {};
TYPED_TEST_SUITE(UpdatePredictors, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

template <class Store>
void declare(Store& s) {
  s.add_matrix("w1", 70, 90);  // spans two chunks of the store
  s.add_vector("b1", 70);
  s.add_matrix("w2", 3, 70);
  s.allocate();
}

using hpt::test::download_values;
using hpt::test::upload_values;

// A trajectory of parameter vectors, rounded to Real so host and device see the same numbers.
template <class Real>
std::vector<Vec> trajectory(std::size_t n, int steps, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Vec> out(static_cast<std::size_t>(steps), Vec(n));
  Vec theta(n), vel(n);
  for (std::size_t i = 0; i < n; ++i) theta[i] = g(gen), vel[i] = 0.1 * g(gen);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      vel[i] = 0.9 * vel[i] + 0.01 * g(gen);
      theta[i] += vel[i];
      out[std::size_t(s)][i] = double(Real(theta[i]));
    }
  }
  return out;
}

TYPED_TEST(UpdatePredictors, FiniteDifferencesMatchHostLoops) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = hpt::test::tolerance<Real>(40);
  for (int order : {1, 2}) {
    const int d = 3;
    hpt::ParameterStore<Real, typename Space::memory_space> store;
    declare(store);
    hpt::FiniteDifferencePredictor<Space, Real> pred(order, d);
    pred.bind(store);
    const auto traj = trajectory<Real>(store.size(), 12, 7u + unsigned(order));
    for (std::size_t s = 0; s < traj.size(); ++s) {
      EXPECT_EQ(pred.ready(), long(s) >= long(order) * d + 1) << "before step " << s;
      upload_values(store.values(), traj[s]);
      pred.observe();
    }
    pred.begin_block();
    const Vec& t0 = traj[11];
    const Vec& t1 = traj[11 - d];
    const Vec& t2 = traj[11 - 2 * d];
    for (int k : {1, 4, 9}) {
      pred.predict(k);
      const Vec got = download_values(store.values());
      const double s = double(k) / d;
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double d1 = t0[i] - t1[i], d2 = t0[i] - 2 * t1[i] + t2[i];
        const double want = t0[i] + s * d1 + (order == 2 ? s * (s + 1) / 2 * d2 : 0.0);
        ASSERT_TRUE(hpt::test::near_rel(got[i], want, tol)) << "order " << order << " k " << k;
      }
    }
  }
}

// The polynomial through the points (xs[j], ys[j]) evaluated at x (Lagrange form), on the host.
double lagrange(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  double sum = 0;
  for (std::size_t j = 0; j < xs.size(); ++j) {
    double l = 1;
    for (std::size_t m = 0; m < xs.size(); ++m)
      if (m != j) l *= (x - xs[m]) / (xs[j] - xs[m]);
    sum += l * ys[j];
  }
  return sum;
}

// Anchors every d observations; a block at observation t uses theta_t and the anchors
// a1 = floor(t / d) d - d (e1 = t - a1 steps back) and, for quadratic, a2 = a1 - d: the polynomial
// through them evaluated k steps ahead, written out here as a host Lagrange sum, for t = 22 or 23
// and 20 (e1 = d, where quadratic is also checked against Newton's form of finite_difference.hpp),
// d = 5, after a first run and a reset, which starts the anchors again.
TYPED_TEST(UpdatePredictors, AnchoredDifferencesMatchHostLagrange) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = hpt::test::tolerance<Real>(200);
  const int d = 5;
  for (const int order : {1, 2})
    for (const int last : {21 + order, 20}) {
      hpt::ParameterStore<Real, typename Space::memory_space> store;
      declare(store);
      hpt::AnchoredDifferencePredictor<Space, Real> pred(order, d);
      pred.bind(store);
      // order + 1 anchors and the newest parameters
      EXPECT_EQ(pred.state_views().size(), std::size_t(order + 2));
      const auto traj = trajectory<Real>(store.size(), 40, 11u + unsigned(order));
      for (int s = 0; s < 8; ++s) {
        upload_values(store.values(), traj[std::size_t(30 + s)]);
        pred.observe();
      }
      pred.reset();
      for (int s = 0; s <= last; ++s) {
        EXPECT_EQ(pred.ready(), s >= order * d + 1) << "order " << order << ", observation " << s;
        upload_values(store.values(), traj[std::size_t(s)]);
        pred.observe();
      }
      pred.begin_block();
      std::vector<int> at{last};  // theta_t, then the anchors a1 (and a2)
      for (int j = 1; j <= order; ++j) at.push_back((last / d - j) * d);
      EXPECT_EQ(pred.span(), double(last - at[1]));
      std::vector<double> xs;
      for (const int a : at) xs.push_back(double(a - last));
      for (int k : {1, 6, 13}) {
        pred.predict(k);
        const Vec got = download_values(store.values());
        for (std::size_t i = 0; i < got.size(); ++i) {
          std::vector<double> ys;
          for (const int a : at) ys.push_back(traj[std::size_t(a)][i]);
          ASSERT_TRUE(hpt::test::near_rel(got[i], lagrange(xs, ys, k), tol))
              << "order " << order << " t " << last << " k " << k << " i " << i;
          if (order == 2 && last % d == 0) {
            const double s = double(k) / d, p0 = ys[0], p1 = ys[1], p2 = ys[2];
            const double newton = p0 + s * (p0 - p1) + s * (s + 1) / 2 * (p0 - 2 * p1 + p2);
            ASSERT_TRUE(hpt::test::near_rel(got[i], newton, tol)) << "k " << k << " i " << i;
          }
        }
      }
    }
}

// After an accepted predict block moved the parameters by D, the kept snapshots move by D too: the
// next linear prediction continues from the new parameters with the real steps' velocity only.
TYPED_TEST(UpdatePredictors, ShiftedHistorySeesRealStepsOnly) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = hpt::test::tolerance<Real>(40);
  const int d = 2;
  hpt::ParameterStore<Real, typename Space::memory_space> store;
  declare(store);
  hpt::FiniteDifferencePredictor<Space, Real> pred(1, d);
  pred.bind(store);
  const auto traj = trajectory<Real>(store.size(), 3, 11u);
  for (const Vec& t : traj) {
    upload_values(store.values(), t);
    pred.observe();
  }
  const auto start = store.make_buffer("block_start");
  store.snapshot(start);
  pred.begin_block();
  pred.predict(5);  // the block: theta moves by 5 (t2 - t0) / 2
  const Vec moved = download_values(store.values());
  pred.shift_history(start);
  pred.begin_block();
  pred.predict(1);
  const Vec got = download_values(store.values());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double want = moved[i] + (traj[2][i] - traj[0][i]) / d;
    ASSERT_TRUE(hpt::test::near_rel(got[i], want, tol)) << "element " << i;
  }
}

// The line fitted on the host: minimise sum_j beta^j (y_j - a - c j)^2 over j = 0 (newest) ..
// n-1 by its 2x2 normal equations; returns the prediction k steps ahead from the fitted level
// (a - c k) or from the newest value (y_0 - c k).
double host_discounted_line(const std::vector<double>& newest_first, double beta, int k,
                            bool fitted) {
  double s0 = 0, s1 = 0, s2 = 0, m0 = 0, m1 = 0, w = 1;
  for (std::size_t j = 0; j < newest_first.size(); ++j, w *= beta) {
    const double x = double(j), y = newest_first[j];
    s0 += w, s1 += w * x, s2 += w * x * x, m0 += w * y, m1 += w * x * y;
  }
  const double det = s0 * s2 - s1 * s1;
  const double a = (s2 * m0 - s1 * m1) / det, c = (s0 * m1 - s1 * m0) / det;
  return (fitted ? a : newest_first[0]) - c * k;
}

// `trend` against the host normal equations, for both origins: the EMAs restart at a reset (8
// earlier observations are forgotten), ready() after lag observations, predictions 1-12 steps
// ahead; and a straight path is continued exactly.
TYPED_TEST(UpdatePredictors, DiscountedTrendMatchesHostLeastSquares) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = hpt::test::tolerance<Real>(2000);
  const int lag = 6, last = 19;
  const double beta = 1.0 - 1.0 / lag;
  for (const bool fitted : {true, false}) {
    hpt::ParameterStore<Real, typename Space::memory_space> store;
    declare(store);
    hpt::DiscountedTrendPredictor<Space, Real> pred(lag, fitted);
    pred.bind(store);
    EXPECT_EQ(pred.state_views().size(),
              std::size_t(hpt::DiscountedTrendPredictor<Space, Real>::kept_copies(fitted)));
    const auto traj = trajectory<Real>(store.size(), 40, 23u);
    for (int s = 0; s < 8; ++s) {
      upload_values(store.values(), traj[std::size_t(30 + s)]);
      pred.observe();
    }
    pred.reset();
    for (int s = 0; s <= last; ++s) {
      EXPECT_EQ(pred.ready(), s >= lag) << "observation " << s;
      upload_values(store.values(), traj[std::size_t(s)]);
      pred.observe();
    }
    pred.begin_block();
    for (int k : {1, 5, 12}) {
      pred.predict(k);
      const Vec got = download_values(store.values());
      for (std::size_t i = 0; i < got.size(); ++i) {
        std::vector<double> ys;
        for (int s = last; s >= 0; --s) ys.push_back(traj[std::size_t(s)][i]);
        ASSERT_TRUE(hpt::test::near_rel(got[i], host_discounted_line(ys, beta, k, fitted), tol))
            << (fitted ? "fitted" : "current") << " k " << k << " i " << i;
      }
    }
    // theta_i(s) = p_i + q_i s: both origins continue the line.
    pred.reset();
    const std::size_t n = store.size();
    auto line = [&](double t) {
      Vec v(n);
      for (std::size_t i = 0; i < n; ++i)
        v[i] = double(int(i % 5) - 2) + double(int(i % 3) - 1) * t / 8;
      return v;
    };
    for (int s = 0; s < 10; ++s) {
      upload_values(store.values(), line(s));
      pred.observe();
    }
    pred.begin_block();
    pred.predict(7);
    const Vec got = download_values(store.values()), want = line(16);
    for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(hpt::test::near_rel(got[i], want[i], tol)) << i;
  }
}

// After an accepted block moved the parameters by D, `trend` fits the observed steps moved by D:
// one more real step, then the prediction equals the host fit of (history + D, new step).
TYPED_TEST(UpdatePredictors, DiscountedTrendShiftsItsHistory) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = hpt::test::tolerance<Real>(2000);
  const int lag = 4;
  for (const bool fitted : {true, false}) {
    hpt::ParameterStore<Real, typename Space::memory_space> store;
    declare(store);
    hpt::DiscountedTrendPredictor<Space, Real> pred(lag, fitted);
    pred.bind(store);
    const auto traj = trajectory<Real>(store.size(), 12, 5u);
    for (int s = 0; s < 11; ++s) {
      upload_values(store.values(), traj[std::size_t(s)]);
      pred.observe();
    }
    const auto start = store.make_buffer("block_start");
    store.snapshot(start);
    pred.begin_block();
    pred.predict(6);
    const Vec moved = download_values(store.values());
    pred.shift_history(start);
    Vec next(
        moved.size());  // a real step after the block: the path's own step from the moved point
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = double(Real(moved[i] + traj[11][i] - traj[10][i]));
    upload_values(store.values(), next);
    pred.observe();
    pred.begin_block();
    pred.predict(3);
    const Vec got = download_values(store.values());
    for (std::size_t i = 0; i < got.size(); ++i) {
      std::vector<double> ys{next[i]};
      for (int s = 10; s >= 0; --s) ys.push_back(traj[std::size_t(s)][i] + moved[i] - traj[10][i]);
      ASSERT_TRUE(
          hpt::test::near_rel(got[i], host_discounted_line(ys, 1.0 - 1.0 / lag, 3, fitted), tol))
          << (fitted ? "fitted" : "current") << " i " << i;
    }
  }
}

TYPED_TEST(UpdatePredictors, QuadraticIsExactOnAQuadraticPath) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::ParameterStore<Real, typename Space::memory_space> store;
  declare(store);
  hpt::FiniteDifferencePredictor<Space, Real> pred(2, 2);
  pred.bind(store);
  const std::size_t n = store.size();
  auto path = [&](double t) {  // theta_i(t) = a_i + b_i t + c_i t^2, small integers: exact in float
    Vec v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = double(int(i % 5) - 2) + double(int(i % 3) - 1) * t / 4 +
             double(int(i % 7) - 3) * t * t / 64;
    return v;
  };
  for (int s = 0; s <= 6; ++s) {
    upload_values(store.values(), path(s));
    pred.observe();
  }
  pred.begin_block();
  pred.predict(5);
  const Vec got = download_values(store.values()), want = path(11);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_TRUE(hpt::test::near_rel(got[i], want[i], hpt::test::tolerance<Real>(16))) << i;
}

TYPED_TEST(UpdatePredictors, FrozenLeavesTheParameters) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::ParameterStore<Real, typename Space::memory_space> store;
  declare(store);
  hpt::FrozenPredictor<Space, Real> pred;
  pred.bind(store);
  const auto traj = trajectory<Real>(store.size(), 2, 3u);
  upload_values(store.values(), traj[1]);
  pred.observe();
  EXPECT_TRUE(pred.ready());
  pred.begin_block();
  pred.predict(7);
  EXPECT_EQ(download_values(store.values()), traj[1]);
}

TYPED_TEST(UpdatePredictors, ExtrapolateRecoversAGeometricUpdateSequence) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::ParameterStore<Real, typename Space::memory_space> store;
  declare(store);
  const double beta = 0.5;
  hpt::ExtrapolatePredictor<Space, Real> pred(6, beta);
  pred.bind(store);
  // Per tensor t the real update at step s is c_t rho_t^s v (one fixed direction v).
  const double rho[3] = {0.8, 0.95, 1.0}, c[3] = {0.5, 0.2, 0.1};
  const std::size_t n = store.size();
  Vec v(n), theta(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) v[i] = 1.0 + double(i % 4) * 0.25;
  auto tensor_of = [&](std::size_t i) {
    for (int t = 2; t >= 0; --t)
      if (i >= store.tensor(t).offset) return t;
    return 0;
  };
  const int steps = 12;
  std::vector<Vec> snaps;
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < n && s > 0; ++i) {
      const int t = tensor_of(i);
      theta[i] += c[t] * std::pow(rho[t], s) * v[i];
    }
    upload_values(store.values(), theta);
    snaps.push_back(download_values(store.values()));
    pred.observe();
  }
  pred.begin_block();
  ASSERT_EQ(pred.fits().size(), 3u);
  const double rho_tol = std::is_same<Real, float>::value ? 2e-3 : 1e-8;
  for (int t = 0; t < 3; ++t)
    EXPECT_NEAR(pred.fits()[std::size_t(t)].rho, rho[t], rho_tol) << "tensor " << t;
  // Prediction k = 3 steps on: the host loop of the same rule on the device's snapshots.
  const int k = 3;
  pred.predict(k);
  const Vec got = download_values(store.values());
  // The bias-corrected EMA of the real updates, from the snapshots.
  Vec ema(n, 0.0);
  for (int s = 1; s < steps; ++s)
    for (std::size_t i = 0; i < n; ++i)
      ema[i] =
          beta * ema[i] + (1 - beta) * (snaps[std::size_t(s)][i] - snaps[std::size_t(s) - 1][i]);
  const double corr = 1.0 / (1.0 - std::pow(beta, steps - 1));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& f = pred.fits()[std::size_t(tensor_of(i))];
    const double want = snaps.back()[i] + f.cumulative(k) * ema[i] * corr;
    ASSERT_TRUE(hpt::test::near_rel(got[i], want, hpt::test::tolerance<Real>(100))) << i;
  }
  // And the fitted step is the true one to within the fit's precision: the true update at lead j
  // is c rho^(steps-1+j) v.
  const double truth_tol = std::is_same<Real, float>::value ? 1e-3 : 1e-6;
  for (std::size_t i = 0; i < n; i += 97) {
    const int t = tensor_of(i);
    double truth = snaps.back()[i];
    for (int j = 1; j <= k; ++j) truth += c[t] * std::pow(rho[t], steps - 1 + j) * v[i];
    EXPECT_NEAR(got[i], truth, truth_tol) << i;
  }
}

TEST(UpdatePredictorFit, NonPositiveProjectionsFallBackToAConstantStep) {
  const auto f = hpt::fit_geometric({0.3, -0.1, 0.4});
  EXPECT_EQ(f.rho, 1.0);
  EXPECT_NEAR(f.c, 0.2, 1e-12);
  EXPECT_NEAR(f.cumulative(5), 1.0, 1e-12);
  const auto g = hpt::fit_geometric({1.0, 0.5, 0.25});  // a_j = rho^-j with rho = 2: clamped to 1
  EXPECT_EQ(g.rho, 1.0);
}

TEST(UpdatePredictorStyles, EveryStyleIsRegisteredWithItsOptions) {
  hpt::OptionSchema schema;
  hpt::declare_update_options(schema);
  hpt::Registry<hpt::UpdatePredictor> reg("update");
  hpt::register_update_styles(reg);
  hpt::Config config(schema);
  for (const char* s : {"linear", "quadratic", "extrapolate", "trend", "dmd", "none"})
    EXPECT_EQ(reg.create(s, config)->style(), s);
  // dmd's rank above its pairs (anchors - 2) is the user's error.
  config.set("update.dmd_anchors", "5", "test");
  config.set("update.dmd_rank", "4", "test");
  EXPECT_THROW(reg.create("dmd", config), hpt::InputError);
}

}  // namespace
