// Dense layer kernels (kernels/dense_ops.hpp) against plain host loops written here.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/dense_ops.hpp"
#include "test_support.hpp"

namespace {

using hpt::Activation;

// Host activations, written from the textbook formulas (gelu: tanh approximation).
double host_activation(Activation a, double z) {
  switch (a) {
    case Activation::Relu:
      return z > 0 ? z : 0;
    case Activation::Tanh:
      return std::tanh(z);
    case Activation::Gelu:
      return 0.5 * z *
             (1.0 + std::tanh(std::sqrt(2.0 / 3.141592653589793) * (z + 0.044715 * z * z * z)));
    default:
      return z;
  }
}

template <class Mem, class Real>
Kokkos::View<Real**, Kokkos::LayoutRight, Mem> random_matrix(int rows, int cols, std::mt19937& gen,
                                                             double scale) {
  Kokkos::View<Real**, Kokkos::LayoutRight, Mem> v("m", rows, cols);
  auto h = Kokkos::create_mirror_view(v);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) h(i, j) = Real(u(gen));
  Kokkos::deep_copy(v, h);
  return v;
}

template <class Mem, class Real>
Kokkos::View<Real*, Kokkos::LayoutRight, Mem> random_vector(int n, std::mt19937& gen,
                                                            double scale) {
  Kokkos::View<Real*, Kokkos::LayoutRight, Mem> v("v", n);
  auto h = Kokkos::create_mirror_view(v);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (int i = 0; i < n; ++i) h(i) = Real(u(gen));
  Kokkos::deep_copy(v, h);
  return v;
}

template <class V>
auto to_host(const V& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

template <class C>
class DenseOps : public ::testing::Test {};
TYPED_TEST_SUITE(DenseOps, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Sizes that are not multiples of the GEMM blocks, and one that spans several blocks.
const std::vector<std::vector<int>> kShapes = {{13, 37, 29}, {70, 100, 130}, {1, 5, 3}};

TYPED_TEST(DenseOps, ForwardMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(11);
  for (const auto& shape : kShapes) {
    const int batch = shape[0], in = shape[1], out = shape[2];
    auto x = random_matrix<Mem, Real>(batch, in, gen, 1.0);
    auto w = random_matrix<Mem, Real>(out, in, gen, 1.0 / std::sqrt(in));
    auto b = random_vector<Mem, Real>(out, gen, 0.5);
    auto hx = to_host(x);
    auto hw = to_host(w);
    auto hb = to_host(b);
    for (Activation act :
         {Activation::Identity, Activation::Relu, Activation::Tanh, Activation::Gelu}) {
      hpt::View2<Real, Mem> z("z", batch, out), y("y", batch, out);
      hpt::dense_forward<Space, Real>(Space(), x, w, b, act, z, y);
      auto hz = to_host(z);
      auto hy = to_host(y);
      const double tol = hpt::test::tolerance<Real>(in);
      for (int i = 0; i < batch; ++i)
        for (int j = 0; j < out; ++j) {
          double ref = hb(j);
          for (int k = 0; k < in; ++k) ref += double(hx(i, k)) * double(hw(j, k));
          ASSERT_TRUE(hpt::test::near_rel(hz(i, j), ref, tol)) << "z(" << i << "," << j << ")";
          ASSERT_TRUE(hpt::test::near_rel(hy(i, j), host_activation(act, ref), 2 * tol))
              << hpt::activation_name(act) << " y(" << i << "," << j << ")";
        }
    }
  }
}

// y may alias z (the identity output layer of the MLP does this).
TYPED_TEST(DenseOps, ForwardInPlaceIdentity) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(12);
  const int batch = 9, in = 6, out = 4;
  auto x = random_matrix<Mem, Real>(batch, in, gen, 1.0);
  auto w = random_matrix<Mem, Real>(out, in, gen, 1.0);
  auto b = random_vector<Mem, Real>(out, gen, 1.0);
  hpt::View2<Real, Mem> z("z", batch, out), y("y", batch, out);
  hpt::dense_forward<Space, Real>(Space(), x, w, b, Activation::Identity, z, y);
  hpt::dense_forward<Space, Real>(Space(), x, w, b, Activation::Identity, z, z);
  auto hz = to_host(z);
  auto hy = to_host(y);
  for (int i = 0; i < batch; ++i)
    for (int j = 0; j < out; ++j) EXPECT_EQ(hz(i, j), hy(i, j));
}

TYPED_TEST(DenseOps, BackwardMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(13);
  for (const auto& shape : kShapes) {
    const int batch = shape[0], in = shape[1], out = shape[2];
    auto x = random_matrix<Mem, Real>(batch, in, gen, 1.0);
    auto w = random_matrix<Mem, Real>(out, in, gen, 1.0);
    auto dz = random_matrix<Mem, Real>(batch, out, gen, 1.0);
    hpt::View2<Real, Mem> dw("dw", out, in), dx("dx", batch, in);
    hpt::View1<Real, Mem> db("db", out);
    hpt::dense_backward<Space, Real>(Space(), x, w, dz, dw, db, dx);
    auto hx = to_host(x);
    auto hw = to_host(w);
    auto hdz = to_host(dz);
    auto hdw = to_host(dw);
    auto hdb = to_host(db);
    auto hdx = to_host(dx);
    for (int j = 0; j < out; ++j) {
      double sb = 0;
      for (int i = 0; i < batch; ++i) sb += hdz(i, j);
      ASSERT_TRUE(hpt::test::near_rel(hdb(j), sb, hpt::test::tolerance<Real>(batch))) << "db " << j;
      for (int k = 0; k < in; ++k) {
        double s = 0;
        for (int i = 0; i < batch; ++i) s += double(hdz(i, j)) * double(hx(i, k));
        ASSERT_TRUE(hpt::test::near_rel(hdw(j, k), s, hpt::test::tolerance<Real>(batch)))
            << "dW(" << j << "," << k << ")";
      }
    }
    for (int i = 0; i < batch; ++i)
      for (int k = 0; k < in; ++k) {
        double s = 0;
        for (int j = 0; j < out; ++j) s += double(hdz(i, j)) * double(hw(j, k));
        ASSERT_TRUE(hpt::test::near_rel(hdx(i, k), s, hpt::test::tolerance<Real>(out)))
            << "dx(" << i << "," << k << ")";
      }
    // The first layer passes an empty dx: dW and db are still computed.
    hpt::View2<Real, Mem> dw2("dw2", out, in);
    hpt::View1<Real, Mem> db2("db2", out);
    hpt::dense_backward<Space, Real>(Space(), x, w, dz, dw2, db2, hpt::View2<Real, Mem>());
    auto hdw2 = to_host(dw2);
    for (int j = 0; j < out; ++j)
      for (int k = 0; k < in; ++k) ASSERT_EQ(hdw2(j, k), hdw(j, k));
  }
}

// dz = dy * act'(z), with act' checked against a central difference of the host activation.
TYPED_TEST(DenseOps, ActivationBackwardMatchesFiniteDifference) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(14);
  const int rows = 11, cols = 17;
  auto z = random_matrix<Mem, Real>(rows, cols, gen, 3.0);
  auto dy = random_matrix<Mem, Real>(rows, cols, gen, 1.0);
  auto hz = to_host(z);
  auto hdy = to_host(dy);
  for (Activation act :
       {Activation::Identity, Activation::Relu, Activation::Tanh, Activation::Gelu}) {
    hpt::View2<Real, Mem> y("y", rows, cols), dz("dz", rows, cols);
    auto hy = Kokkos::create_mirror_view(y);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) hy(i, j) = Real(host_activation(act, hz(i, j)));
    Kokkos::deep_copy(y, hy);
    hpt::activation_backward<Space, Real>(Space(), act, z, y, dy, dz);
    auto hdz = to_host(dz);
    const double h = 1e-6;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const double zz = hz(i, j);
        if (act == Activation::Relu && std::fabs(zz) < 1e-3) continue;  // kink
        const double d = (host_activation(act, zz + h) - host_activation(act, zz - h)) / (2 * h);
        ASSERT_TRUE(hpt::test::near_rel(hdz(i, j), hdy(i, j) * d,
                                        std::max(1e-7, 4 * hpt::test::tolerance<Real>())))
            << hpt::activation_name(act) << " at z = " << zz;
      }
  }
}

TEST(DenseOpsParse, ActivationNames) {
  EXPECT_EQ(hpt::parse_activation("gelu", "model.activation"), Activation::Gelu);
  EXPECT_EQ(hpt::parse_activation("relu", "model.activation"), Activation::Relu);
  try {
    hpt::parse_activation("sigmoidish", "model.activation");
    FAIL() << "no InputError";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.activation"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("sigmoidish"), std::string::npos);
  }
}

}  // namespace
