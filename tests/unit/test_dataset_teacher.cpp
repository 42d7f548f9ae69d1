// The teacher style's device code: the tiled dense layer and argmax against host loops on every
// backend and precision, and the teacher's labels and targets against a host forward pass written
// here.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "physics-style-modules/dataset/synthetic.hpp"
#include "kernels/teacher_kernels.hpp"
#include "test_support.hpp"

namespace {

// Host reference: outputs of a tanh MLP (linear last layer) for row-major inputs.
std::vector<double> host_forward(const hpt::dataset::TeacherWeights& t,
                                 const std::vector<double>& x, std::int64_t rows) {
  std::vector<double> act = x;
  for (std::size_t l = 0; l + 1 < t.widths.size(); ++l) {
    const int in = t.widths[l], out = t.widths[l + 1];
    const bool last = l + 2 == t.widths.size();
    std::vector<double> next(std::size_t(rows * out));
    for (std::int64_t r = 0; r < rows; ++r)
      for (int o = 0; o < out; ++o) {
        double s = 0;
        for (int k = 0; k < in; ++k) s += act[r * in + k] * t.w[l][std::size_t(o) * in + k];
        s += t.b[l][o];
        next[r * out + o] = last ? s : std::tanh(s);
      }
    act.swap(next);
  }
  return act;
}

}  // namespace

template <class C>
class DatasetTeacherKernels : public ::testing::Test {};
TYPED_TEST_SUITE(DatasetTeacherKernels, hpt::test::BackendsAndPrecisions,
                 hpt::test::TypedTestNames);

TYPED_TEST(DatasetTeacherKernels, DenseMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  // Sizes that are not multiples of the 16 x 16 tiles.
  const int rows = 37, in = 45, out = 19;
  std::mt19937 gen(21);
  std::uniform_real_distribution<double> u(-1, 1);
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> x("x", rows, in), w("w", out, in),
      y("y", rows, out);
  Kokkos::View<Real*, Kokkos::LayoutRight, Mem> b("b", out);
  auto hx = Kokkos::create_mirror_view(x);
  auto hw = Kokkos::create_mirror_view(w);
  auto hb = Kokkos::create_mirror_view(b);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < in; ++k) hx(r, k) = Real(u(gen));
  for (int o = 0; o < out; ++o) {
    for (int k = 0; k < in; ++k) hw(o, k) = Real(u(gen) / 3);
    hb(o) = Real(u(gen));
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(w, hw);
  Kokkos::deep_copy(b, hb);
  for (bool apply_tanh : {true, false}) {
    hpt::dataset::teacher_dense<Space, Real>(Space(), x, w, b, y, apply_tanh);
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    for (int r = 0; r < rows; ++r)
      for (int o = 0; o < out; ++o) {
        double s = hb(o);
        for (int k = 0; k < in; ++k) s += double(hx(r, k)) * double(hw(o, k));
        const double want = apply_tanh ? std::tanh(s) : s;
        ASSERT_TRUE(hpt::test::near_rel(hy(r, o), want, hpt::test::tolerance<Real>(in)))
            << "row " << r << " output " << o << (apply_tanh ? " tanh" : " linear");
      }
  }
}

TYPED_TEST(DatasetTeacherKernels, ArgmaxMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int rows = 53, cols = 7;
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(-3, 3);
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> y("y", rows, cols);
  Kokkos::View<int*, Kokkos::LayoutRight, Mem> labels("labels", rows);
  auto hy = Kokkos::create_mirror_view(y);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) hy(r, c) = Real(u(gen));
  hy(0, 2) = hy(0, 5) = Real(10);  // a tie: the first maximum wins
  Kokkos::deep_copy(y, hy);
  hpt::dataset::argmax_rows<Space, Real>(Space(), y, labels);
  const auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), labels);
  for (int r = 0; r < rows; ++r) {
    int best = 0;
    for (int c = 1; c < cols; ++c)
      if (hy(r, c) > hy(r, best)) best = c;
    ASSERT_EQ(hl(r), best) << "row " << r;
  }
  EXPECT_EQ(hl(0), 2);
}

template <class S>
class DatasetTeacherForward : public ::testing::Test {};
TYPED_TEST_SUITE(DatasetTeacherForward, hpt::test::Backends, hpt::test::TypedTestNames);

TYPED_TEST(DatasetTeacherForward, MatchesHostForwardPass) {
  using Space = TypeParam;
  const std::vector<int> widths{7, 33, 20, 5};
  const auto t = hpt::make_teacher_weights(widths, 3);
  std::mt19937 gen(8);
  std::normal_distribution<double> normal;
  const std::int64_t rows = 70;
  std::vector<double> x(std::size_t(rows * widths[0]));
  for (auto& v : x) v = normal(gen);
  const auto y = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), hpt::dataset::teacher_forward(Space(), t, x, rows));
  const auto want = host_forward(t, x, rows);
  ASSERT_EQ(y.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_TRUE(hpt::test::near_rel(y.data()[i], want[i], 1e-12)) << "entry " << i;
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
TEST(DatasetTeacher, CpuBackendsAgreeBitForBit) {
  const std::vector<int> widths{9, 40, 3};
  const auto t = hpt::make_teacher_weights(widths, 4);
  std::vector<double> x(std::size_t(100 * 9));
  std::mt19937 gen(2);
  std::normal_distribution<double> normal;
  for (auto& v : x) v = normal(gen);
  const auto a = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), hpt::dataset::teacher_forward(Kokkos::Serial(), t, x, 100));
  const auto b = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), hpt::dataset::teacher_forward(Kokkos::OpenMP(), t, x, 100));
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.data()[i], b.data()[i]) << "entry " << i;
}
#endif

TEST(DatasetTeacher, WeightsHaveTheDocumentedScale) {
  const auto t = hpt::make_teacher_weights({400, 300, 2}, 1);
  ASSERT_EQ(t.w.size(), 2u);
  ASSERT_EQ(t.w[0].size(), 400u * 300u);
  double sq = 0;
  for (double v : t.w[0]) sq += v * v;
  EXPECT_NEAR(sq / t.w[0].size(), 1.0 / 400, 0.05 / 400);  // N(0, 1 / fan_in)
  for (double v : t.b[1]) EXPECT_EQ(v, 0.0);
}

TEST(DatasetTeacher, LabelsAndTargetsMatchHostForwardPass) {
  const std::vector<int> widths{6, 24, 24, 4};
  const std::int64_t rows = 300;
  const auto t = hpt::make_teacher_weights(widths, 17);
  const auto cls = hpt::make_teacher(rows, widths, hpt::Task::Classification, 17);
  const auto reg = hpt::make_teacher(rows, widths, hpt::Task::Regression, 17);
  ASSERT_EQ(cls.x, reg.x);  // the same inputs for both tasks
  ASSERT_EQ(cls.outputs, 4);
  const auto want = host_forward(t, cls.x, rows);
  int used[4] = {0, 0, 0, 0};
  for (std::int64_t r = 0; r < rows; ++r) {
    int best = 0;
    for (int k = 1; k < 4; ++k)
      if (want[r * 4 + k] > want[r * 4 + best]) best = k;
    ++used[best];
    EXPECT_EQ(cls.labels[r], best) << "row " << r;
    for (int k = 0; k < 4; ++k)
      ASSERT_TRUE(hpt::test::near_rel(reg.targets[r * 4 + k], want[r * 4 + k], 1e-12));
  }
  for (int k = 0; k < 4; ++k) EXPECT_GT(used[k], 0) << "class " << k << " never chosen";
}
