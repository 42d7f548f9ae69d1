// Update style `dmd` (physics-style-modules/update/mode_decomposition.hpp, dmd_fit.hpp): the
// Jacobi eigensolver against the properties A V = V L and V^T V = I; the fit recovers a linear
// displacement map exactly, from inner products only, and caps a growing one; and the predictor,
// fed a parameter path whose displacements between anchors follow a linear map in a
// three-dimensional subspace, continues that path exactly (and follows its documented rule when
// the block starts between anchors), on every backend and precision.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/parameter_store.hpp"
#include "physics-style-modules/update/dmd_fit.hpp"
#include "physics-style-modules/update/mode_decomposition.hpp"
#include "test_support.hpp"

namespace {

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// A path in R^n whose displacement between anchors i and i+1 is Q z_i+1 with z_i+1 = B z_i: Q has
// three orthonormal columns, B decays one direction by 0.9 and rotates the other two by 0.3 rad
// at radius `radius`.
struct LinearDisplacements {
  std::vector<Vec> q;  // 3 columns of length n
  double b[3][3];
  Vec z1{0.12, -0.05, 0.08};

  LinearDisplacements(std::size_t n, double radius, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    for (int c = 0; c < 3; ++c) {
      Vec v(n);
      for (double& x : v) x = g(gen);
      for (const Vec& u : q) {  // Gram-Schmidt
        const double p = dot(v, u);
        for (std::size_t i = 0; i < n; ++i) v[i] -= p * u[i];
      }
      const double norm = std::sqrt(dot(v, v));
      for (double& x : v) x /= norm;
      q.push_back(v);
    }
    const double c = radius * std::cos(0.3), s = radius * std::sin(0.3);
    const double m[3][3] = {{0.9, 0, 0}, {0, c, -s}, {0, s, c}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) b[i][j] = m[i][j];
  }
  // z_i (i >= 1).
  Vec z(int i) const {
    Vec out = z1;
    for (int s = 1; s < i; ++s) {
      Vec next(3, 0.0);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) next[std::size_t(r)] += b[r][c] * out[std::size_t(c)];
      out = next;
    }
    return out;
  }
  Vec displacement(int i) const {
    const Vec zi = z(i);
    Vec y(q[0].size(), 0.0);
    for (int c = 0; c < 3; ++c)
      for (std::size_t k = 0; k < y.size(); ++k) y[k] += zi[std::size_t(c)] * q[std::size_t(c)][k];
    return y;
  }
};

TEST(DmdFit, JacobiEigenpairsOfASymmetricMatrix) {
  const int n = 6;
  std::mt19937 gen(3);
  std::normal_distribution<double> g(0.0, 1.0);
  Vec r(std::size_t(n * n)), a(std::size_t(n * n), 0.0);
  for (double& x : r) x = g(gen);
  for (int i = 0; i < n; ++i)  // a = r^T r
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        a[std::size_t(i * n + j)] += r[std::size_t(k * n + i)] * r[std::size_t(k * n + j)];
  Vec values, vectors;
  hpt::symmetric_eigen(a, n, values, vectors);
  for (int c = 0; c < n; ++c) {
    if (c > 0) {
      EXPECT_GE(values[std::size_t(c - 1)], values[std::size_t(c)]);
    }
    for (int i = 0; i < n; ++i) {
      double av = 0;
      for (int k = 0; k < n; ++k) av += a[std::size_t(i * n + k)] * vectors[std::size_t(k * n + c)];
      EXPECT_NEAR(av, values[std::size_t(c)] * vectors[std::size_t(i * n + c)], 1e-10);
    }
    for (int d = 0; d < n; ++d) {
      double vv = 0;
      for (int k = 0; k < n; ++k)
        vv += vectors[std::size_t(k * n + c)] * vectors[std::size_t(k * n + d)];
      EXPECT_NEAR(vv, c == d ? 1.0 : 0.0, 1e-12);
    }
  }
}

// The fit from the Gram matrix of y_1 .. y_6 predicts y_7, y_8, ... exactly; its spectral radius
// is B's (0.9), and a map of radius 1.2 is reported as such and capped to 1.
TEST(DmdFit, RecoversALinearDisplacementMapFromInnerProducts) {
  const LinearDisplacements path(500, 0.8, 5u);
  const int m = 6;
  std::vector<Vec> y;
  for (int i = 1; i <= m; ++i) y.push_back(path.displacement(i));
  Vec gram(std::size_t(m * m));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      gram[std::size_t(i * m + j)] = dot(y[std::size_t(i)], y[std::size_t(j)]);
  const hpt::DmdFit fit = hpt::fit_dmd(gram, m, 4, 1.0);
  EXPECT_EQ(fit.rank, 3);  // the fourth eigenvalue is rounding
  EXPECT_NEAR(fit.radius, 0.9, 1e-6);
  for (int j = 1; j <= 4; ++j) {
    const Vec c = fit.displacement(j);
    const Vec want = path.displacement(m + j);
    for (std::size_t k = 0; k < want.size(); k += 7) {
      double got = 0;
      for (int i = 0; i < m - 1; ++i) got += c[std::size_t(i)] * y[std::size_t(i)][k];
      ASSERT_NEAR(got, want[k], 1e-9) << "j " << j << " element " << k;
    }
  }
  // motion(2.5): y_7 + y_8 + y_9 / 2
  const Vec w = fit.motion(2.5);
  const Vec y7 = path.displacement(7), y8 = path.displacement(8), y9 = path.displacement(9);
  for (std::size_t k = 0; k < y7.size(); k += 11) {
    double got = 0;
    for (int i = 0; i < m - 1; ++i) got += w[std::size_t(i)] * y[std::size_t(i)][k];
    ASSERT_NEAR(got, y7[k] + y8[k] + 0.5 * y9[k], 1e-9) << k;
  }

  const LinearDisplacements growing(500, 1.2, 6u);
  y.clear();
  for (int i = 1; i <= m; ++i) y.push_back(growing.displacement(i));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      gram[std::size_t(i * m + j)] = dot(y[std::size_t(i)], y[std::size_t(j)]);
  const hpt::DmdFit capped = hpt::fit_dmd(gram, m, 4, 1.0);
  EXPECT_NEAR(capped.raw_radius, 1.2, 1e-3);  // two eigenvalues of modulus 1.2
  EXPECT_NEAR(capped.radius, 1.0, 1e-12);
}

TEST(DmdFit, NoMotionPredictsNothing) {
  const hpt::DmdFit fit = hpt::fit_dmd(Vec(9, 0.0), 3, 1, 1.0);
  EXPECT_EQ(fit.rank, 0);
  EXPECT_TRUE(fit.motion(3.0).empty());
}

template <class C>
class DmdPredictorTest : public ::testing::Test {};
TYPED_TEST_SUITE(DmdPredictorTest, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// theta_s at s = i d + u (0 <= u < d): anchor a_i + (u / d) y_i+1, a_0 = base, a_i+1 = a_i + y_i+1.
template <class Real>
Vec path_at(const LinearDisplacements& path, const Vec& base, int d, int s) {
  Vec theta = base;
  const int whole = s / d, u = s % d;
  for (int i = 1; i <= whole + (u > 0 ? 1 : 0); ++i) {
    const double f = i <= whole ? 1.0 : double(u) / d;
    const Vec y = path.displacement(i);
    for (std::size_t k = 0; k < theta.size(); ++k) theta[k] += f * y[k];
  }
  for (double& x : theta) x = double(Real(x));
  return theta;
}

// Anchors every d = 3 steps, 5 of them, rank 3: observed to t = 18 (an anchor; the ring has
// wrapped), the predictions 1-10 steps ahead are the path's continuation; observed to t = 20, they
// are theta_20 plus the same predicted motion. After an accepted block every anchor moves with it.
TYPED_TEST(DmdPredictorTest, ContinuesALinearDisplacementPath) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const double tol = std::is_same<Real, float>::value ? 2e-4 : 1e-9;
  const int d = 3, anchors = 5;
  hpt::ParameterStore<Real, typename Space::memory_space> store;
  store.add_matrix("w1", 40, 30);
  store.add_vector("b1", 40);
  store.allocate();
  const LinearDisplacements path(store.size(), 0.8, 9u);
  Vec base(store.size());
  std::mt19937 gen(4);
  std::normal_distribution<double> g(0.0, 1.0);
  for (double& x : base) x = g(gen);
  for (const int last : {18, 20}) {
    hpt::DmdPredictor<Space, Real> pred(d, anchors, 3);
    pred.bind(store);
    for (int s = 0; s <= last; ++s) {
      EXPECT_EQ(pred.ready(), s >= (anchors - 1) * d + 1) << s;
      hpt::test::upload_values(store.values(), path_at<Real>(path, base, d, s));
      pred.observe();
    }
    pred.begin_block();
    EXPECT_EQ(pred.fit().rank, 3);
    const Vec theta_t = path_at<Real>(path, base, d, last);
    for (int k = 1; k <= 10; ++k) {
      pred.predict(k);
      const Vec got = hpt::test::download_values(store.values());
      // The motion from anchor 6 on (the newest anchor at both t), added to theta_t.
      const Vec from = path_at<double>(path, base, d, 18),
                to = path_at<double>(path, base, d, 18 + k);
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], theta_t[i] + to[i] - from[i], tol)
            << "t " << last << " k " << k << " i " << i;
    }
    // An accepted block: parameters moved by D from the block's start; every anchor moves by D.
    const auto start = store.make_buffer("block_start");
    hpt::test::upload_values(start, theta_t);
    const Vec moved = hpt::test::download_values(store.values());
    const auto views = pred.state_views();
    ASSERT_EQ(views.size(), 2u);  // the newest parameters and the anchor ring
    const Vec before = hpt::test::download_values(views[1].view);
    pred.shift_history(start);
    const Vec after = hpt::test::download_values(views[1].view);
    for (std::size_t i = 0; i < after.size(); ++i) {
      const std::size_t p = i % store.size();
      ASSERT_NEAR(after[i], before[i] + moved[p] - theta_t[p], tol) << i;
    }
  }
}

}  // namespace
