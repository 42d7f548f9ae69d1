// Loss kernels (kernels/losses.hpp) against host formulas written here, in double.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/losses.hpp"
#include "test_support.hpp"

namespace {

template <class Mem, class Real>
hpt::View2<Real, Mem> make_matrix(const std::vector<std::vector<double>>& rows) {
  hpt::View2<Real, Mem> v("m", rows.size(), rows[0].size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[0].size(); ++j) h(i, j) = Real(rows[i][j]);
  Kokkos::deep_copy(v, h);
  return v;
}

template <class Mem>
hpt::View1<int, Mem> make_labels(const std::vector<int>& labels) {
  hpt::View1<int, Mem> v("labels", labels.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < labels.size(); ++i) h(i) = labels[i];
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<std::vector<double>> random_rows(int rows, int cols, std::mt19937& gen, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(rows),
                                       std::vector<double>(static_cast<std::size_t>(cols)));
  for (auto& r : out)
    for (auto& x : r) x = u(gen);
  return out;
}

// The values as the kernel sees them (rounded to Real), so the reference differs only by
// arithmetic.
template <class Real>
std::vector<std::vector<double>> rounded(std::vector<std::vector<double>> m) {
  for (auto& r : m)
    for (auto& x : r) x = double(Real(x));
  return m;
}

int host_argmax(const std::vector<double>& r) {
  return int(std::max_element(r.begin(), r.end()) - r.begin());
}

template <class C>
class Losses : public ::testing::Test {};
TYPED_TEST_SUITE(Losses, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Host cross-entropy: log(sum_j exp(z_j)) - z_label per row, with the maximum factored out.
double host_cross_entropy_row(const std::vector<double>& z, int label, std::vector<double>* p) {
  const double m = *std::max_element(z.begin(), z.end());
  double s = 0;
  for (double v : z) s += std::exp(v - m);
  if (p) {
    p->resize(z.size());
    for (std::size_t j = 0; j < z.size(); ++j) (*p)[j] = std::exp(z[j] - m) / s;
  }
  return m + std::log(s) - z[std::size_t(label)];
}

template <class Case>
void check_cross_entropy(double scale, unsigned seed) {
  using Space = typename Case::space;
  using Real = typename Case::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(seed);
  const int batch = 23, classes = 7;
  const auto z = rounded<Real>(random_rows(batch, classes, gen, scale));
  std::vector<int> labels(batch);
  std::uniform_int_distribution<int> pick(0, classes - 1);
  for (auto& l : labels) l = pick(gen);
  auto logits = make_matrix<Mem, Real>(z);
  auto lab = make_labels<Mem>(labels);
  hpt::View2<Real, Mem> grad("grad", batch, classes);
  const auto got = hpt::softmax_cross_entropy<Space, Real>(Space(), logits, lab, grad);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
  double loss = 0, correct = 0;
  for (int i = 0; i < batch; ++i) {
    std::vector<double> p;
    loss += host_cross_entropy_row(z[std::size_t(i)], labels[std::size_t(i)], &p);
    if (host_argmax(z[std::size_t(i)]) == labels[std::size_t(i)]) correct += 1;
    double row_sum = 0;
    for (int j = 0; j < classes; ++j) {
      const double ref = (p[std::size_t(j)] - (j == labels[std::size_t(i)] ? 1.0 : 0.0)) / batch;
      ASSERT_TRUE(hpt::test::near_rel(hg(i, j), ref, hpt::test::tolerance<Real>(classes)))
          << "grad(" << i << "," << j << ")";
      row_sum += hg(i, j);
    }
    // Property: each gradient row sums to zero (probabilities sum to one).
    EXPECT_NEAR(row_sum, 0.0, hpt::test::tolerance<Real>(classes));
  }
  loss /= batch;
  EXPECT_TRUE(hpt::test::near_rel(got.loss, loss, hpt::test::tolerance<Real>(batch * classes)));
  EXPECT_DOUBLE_EQ(got.accuracy, correct / batch);
  EXPECT_TRUE(std::isfinite(got.loss));

  // Evaluation (no gradient View) gives the same numbers.
  const auto eval =
      hpt::softmax_cross_entropy<Space, Real>(Space(), logits, lab, hpt::View2<Real, Mem>());
  EXPECT_EQ(eval.loss, got.loss);
  EXPECT_EQ(eval.accuracy, got.accuracy);
}

TYPED_TEST(Losses, CrossEntropyMatchesHost) {
  check_cross_entropy<TypeParam>(3.0, 21);
}

// Logits of several hundred: exp overflows float at 89 and double at 710 without the max shift.
TYPED_TEST(Losses, CrossEntropyStableForLargeLogits) {
  check_cross_entropy<TypeParam>(800.0, 22);
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  // Closed cases: the correct class far ahead gives ~0, far behind gives the gap.
  auto logits = make_matrix<Mem, Real>({{1000.0, 0.0, -1000.0}, {0.0, 1000.0, -1000.0}});
  auto lab = make_labels<Mem>({0, 0});
  const auto got =
      hpt::softmax_cross_entropy<Space, Real>(Space(), logits, lab, hpt::View2<Real, Mem>());
  EXPECT_TRUE(hpt::test::near_rel(got.loss, 0.5 * (0.0 + 1000.0), hpt::test::tolerance<Real>()));
  EXPECT_DOUBLE_EQ(got.accuracy, 0.5);
}

TYPED_TEST(Losses, CrossEntropyBadLabelIsNaN) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  auto logits = make_matrix<Mem, Real>({{0.5, -0.25}, {1.0, 2.0}});
  const auto got = hpt::softmax_cross_entropy<Space, Real>(
      Space(), logits, make_labels<Mem>({0, 2}), hpt::View2<Real, Mem>());
  EXPECT_TRUE(std::isnan(got.loss));
}

TYPED_TEST(Losses, MeanSquaredErrorMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(23);
  const int batch = 19, outputs = 5;
  const auto p = rounded<Real>(random_rows(batch, outputs, gen, 2.0));
  const auto t = rounded<Real>(random_rows(batch, outputs, gen, 2.0));
  auto pred = make_matrix<Mem, Real>(p);
  auto target = make_matrix<Mem, Real>(t);
  hpt::View2<Real, Mem> grad("grad", batch, outputs);
  const auto got = hpt::mean_squared_error<Space, Real>(Space(), pred, target, grad);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
  double loss = 0, correct = 0;
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < outputs; ++j) {
      const double d = p[std::size_t(i)][std::size_t(j)] - t[std::size_t(i)][std::size_t(j)];
      loss += d * d;
      ASSERT_TRUE(
          hpt::test::near_rel(hg(i, j), 2 * d / (batch * outputs), hpt::test::tolerance<Real>()));
    }
    if (host_argmax(p[std::size_t(i)]) == host_argmax(t[std::size_t(i)])) correct += 1;
  }
  EXPECT_TRUE(hpt::test::near_rel(got.loss, loss / (batch * outputs),
                                  hpt::test::tolerance<Real>(batch * outputs)));
  EXPECT_DOUBLE_EQ(got.accuracy, correct / batch);

  // One output: accuracy is undefined (NaN), the loss is still the mean square.
  auto p1 = make_matrix<Mem, Real>({{1.0}, {2.0}});
  auto t1 = make_matrix<Mem, Real>({{0.5}, {4.0}});
  const auto one = hpt::mean_squared_error<Space, Real>(Space(), p1, t1, hpt::View2<Real, Mem>());
  EXPECT_TRUE(hpt::test::near_rel(one.loss, (0.25 + 4.0) / 2, hpt::test::tolerance<Real>()));
  EXPECT_TRUE(std::isnan(one.accuracy));
}

TYPED_TEST(Losses, MeanSquaredErrorOneHotMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(24);
  const int batch = 17, outputs = 4;
  const auto p = rounded<Real>(random_rows(batch, outputs, gen, 1.5));
  std::vector<int> labels(batch);
  std::uniform_int_distribution<int> pick(0, outputs - 1);
  for (auto& l : labels) l = pick(gen);
  auto pred = make_matrix<Mem, Real>(p);
  hpt::View2<Real, Mem> grad("grad", batch, outputs);
  const auto got =
      hpt::mean_squared_error_onehot<Space, Real>(Space(), pred, make_labels<Mem>(labels), grad);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
  double loss = 0, correct = 0;
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < outputs; ++j) {
      const double d =
          p[std::size_t(i)][std::size_t(j)] - (j == labels[std::size_t(i)] ? 1.0 : 0.0);
      loss += d * d;
      ASSERT_TRUE(
          hpt::test::near_rel(hg(i, j), 2 * d / (batch * outputs), hpt::test::tolerance<Real>()));
    }
    if (host_argmax(p[std::size_t(i)]) == labels[std::size_t(i)]) correct += 1;
  }
  EXPECT_TRUE(hpt::test::near_rel(got.loss, loss / (batch * outputs),
                                  hpt::test::tolerance<Real>(batch * outputs)));
  EXPECT_DOUBLE_EQ(got.accuracy, correct / batch);
}

TYPED_TEST(Losses, AccuracyMatchesHostArgmax) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(25);
  const int batch = 41, classes = 6;
  const auto s = rounded<Real>(random_rows(batch, classes, gen, 1.0));
  std::vector<int> labels(batch);
  // Half the labels are the argmax, so the expected accuracy is well inside (0, 1).
  std::uniform_int_distribution<int> pick(0, classes - 1);
  for (int i = 0; i < batch; ++i)
    labels[std::size_t(i)] = i % 2 == 0 ? host_argmax(s[std::size_t(i)]) : pick(gen);
  double correct = 0;
  for (int i = 0; i < batch; ++i)
    if (host_argmax(s[std::size_t(i)]) == labels[std::size_t(i)]) correct += 1;
  const double got =
      hpt::accuracy<Space, Real>(Space(), make_matrix<Mem, Real>(s), make_labels<Mem>(labels));
  EXPECT_DOUBLE_EQ(got, correct / batch);
  EXPECT_GT(got, 0.4);
  EXPECT_LT(got, 1.0);
}

}  // namespace
