// The mlp model (physics-style-modules/model/mlp.hpp): forward against a host network written here,
// and the analytic gradient of every parameter against central finite differences of the loss, in
// double.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "physics-style-modules/model/mlp.hpp"
#include "test_support.hpp"

namespace {

using hpt::Activation;
using hpt::LossKind;
using Vec = std::vector<double>;
using Matrix = std::vector<Vec>;

double host_act(Activation a, double z) {
  switch (a) {
    case Activation::Relu:
      return std::max(z, 0.0);
    case Activation::Tanh:
      return std::tanh(z);
    case Activation::Gelu:
      return 0.5 * z * (1 + std::tanh(0.7978845608028654 * (z + 0.044715 * z * z * z)));
    default:
      return z;
  }
}

// Host forward of the network from the flat parameters: returns the outputs and, through
// `min_abs_hidden`, the smallest |pre-activation| of the hidden layers (relu kinks).
Matrix host_forward(const std::vector<int>& layers, Activation act, const Vec& theta,
                    const Matrix& x, double* min_abs_hidden) {
  Matrix a = x;
  std::size_t off = 0;
  double min_abs = 1e300;
  const int n = int(layers.size()) - 1;
  for (int l = 0; l < n; ++l) {
    const int in = layers[std::size_t(l)], out = layers[std::size_t(l) + 1];
    const std::size_t w_off = off, b_off = off + std::size_t(in * out);
    off = b_off + std::size_t(out);
    Matrix next(a.size(), Vec(std::size_t(out)));
    for (std::size_t i = 0; i < a.size(); ++i)
      for (int j = 0; j < out; ++j) {
        double z = theta[b_off + std::size_t(j)];
        for (int k = 0; k < in; ++k)
          z += theta[w_off + std::size_t(j * in + k)] * a[i][std::size_t(k)];
        if (l + 1 < n) {
          min_abs = std::min(min_abs, std::fabs(z));
          z = host_act(act, z);
        }
        next[i][std::size_t(j)] = z;
      }
    a = next;
  }
  if (min_abs_hidden) *min_abs_hidden = min_abs;
  return a;
}

double host_loss(LossKind loss, const Matrix& out, const std::vector<int>& labels,
                 const Matrix& targets) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Vec& z = out[i];
    if (loss == LossKind::CrossEntropy) {
      const double m = *std::max_element(z.begin(), z.end());
      double e = 0;
      for (double v : z) e += std::exp(v - m);
      s += m + std::log(e) - z[std::size_t(labels[i])];
    } else {
      for (std::size_t j = 0; j < z.size(); ++j) {
        const double t = targets.empty() ? (int(j) == labels[i] ? 1.0 : 0.0) : targets[i][j];
        s += (z[j] - t) * (z[j] - t);
      }
    }
  }
  return loss == LossKind::CrossEntropy ? s / double(out.size())
                                        : s / double(out.size() * out[0].size());
}

template <class Mem, class Real>
hpt::View2<Real, Mem> to_device(const Matrix& m) {
  hpt::View2<Real, Mem> v("m", m.size(), m[0].size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = 0; j < m[0].size(); ++j) h(i, j) = Real(m[i][j]);
  Kokkos::deep_copy(v, h);
  return v;
}

template <class Mem>
hpt::View1<int, Mem> to_device(const std::vector<int>& l) {
  hpt::View1<int, Mem> v("labels", l.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < l.size(); ++i) h(i) = l[i];
  Kokkos::deep_copy(v, h);
  return v;
}

template <class View>
Vec download(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  Vec x(v.extent(0));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(h(i));
  return x;
}

Matrix random_matrix(int rows, int cols, std::mt19937& gen, double scale) {
  std::normal_distribution<double> n(0.0, scale);
  Matrix m(static_cast<std::size_t>(rows), Vec(static_cast<std::size_t>(cols)));
  for (auto& r : m)
    for (auto& v : r) v = n(gen);
  return m;
}

// A batch for the network: inputs (redrawn until no hidden pre-activation is within 1e-3 of a relu
// kink), class labels and regression targets.
struct HostBatch {
  Matrix x, targets;
  std::vector<int> labels;
};

HostBatch make_batch(const std::vector<int>& layers, Activation act, const Vec& theta, int rows,
                     unsigned seed) {
  std::mt19937 gen(seed);
  HostBatch b;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    b.x = random_matrix(rows, layers.front(), gen, 1.0);
    double min_abs = 0;
    host_forward(layers, act, theta, b.x, &min_abs);
    if (min_abs > 1e-3) break;
  }
  std::uniform_int_distribution<int> pick(0, layers.back() - 1);
  for (int i = 0; i < rows; ++i) b.labels.push_back(pick(gen));
  b.targets = random_matrix(rows, layers.back(), gen, 1.0);
  return b;
}

const std::vector<std::vector<int>> kNets = {{5, 7, 4}, {3, 6, 5, 2}};
const Activation kActs[] = {Activation::Relu, Activation::Tanh, Activation::Gelu};

// ---- forward vs host network, every backend and precision

template <class C>
class MlpForward : public ::testing::Test {};
TYPED_TEST_SUITE(MlpForward, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(MlpForward, MatchesHostNetwork) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  unsigned seed = 100;
  for (const auto& layers : kNets)
    for (Activation act : kActs)
      for (LossKind loss : {LossKind::CrossEntropy, LossKind::MeanSquaredError}) {
        hpt::MlpOptions o;
        o.layers = layers;
        o.activation = act;
        o.loss = loss;
        o.seed = ++seed;
        hpt::Mlp<Space, Real> net(o);
        net.reserve_batch(16);
        const Vec theta = download(net.parameters().values());
        const HostBatch hb = make_batch(layers, act, theta, 11, seed);
        Matrix xr = hb.x;  // the inputs as the device sees them
        for (auto& r : xr)
          for (auto& v : r) v = double(Real(v));
        hpt::Batch<Real, Mem> batch;
        batch.x = to_device<Mem, Real>(hb.x);
        batch.labels = to_device<Mem>(hb.labels);
        if (loss == LossKind::MeanSquaredError) batch.targets = to_device<Mem, Real>(hb.targets);
        const auto got = net.forward(batch);
        const Matrix ref_out = host_forward(layers, act, theta, xr, nullptr);
        Matrix targets = hb.targets;
        for (auto& r : targets)
          for (auto& v : r) v = double(Real(v));
        const double ref_loss = host_loss(loss, ref_out, hb.labels, targets);
        const double tol = hpt::test::tolerance<Real>(64);
        EXPECT_TRUE(hpt::test::near_rel(got.loss, ref_loss, tol)) << net.summary();
        auto out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), net.outputs());
        ASSERT_EQ(out.extent(0), ref_out.size());
        for (std::size_t i = 0; i < ref_out.size(); ++i)
          for (std::size_t j = 0; j < ref_out[0].size(); ++j)
            ASSERT_TRUE(hpt::test::near_rel(out(i, j), ref_out[i][j], tol)) << net.summary();
      }
}

// ---- gradient check, double on every backend

template <class S>
class MlpGradcheck : public ::testing::Test {};
TYPED_TEST_SUITE(MlpGradcheck, hpt::test::Backends, hpt::test::TypedTestNames);

template <class Space>
void gradcheck(const std::vector<int>& layers, Activation act, LossKind loss, bool onehot,
               unsigned seed) {
  using Mem = typename Space::memory_space;
  hpt::MlpOptions o;
  o.layers = layers;
  o.activation = act;
  o.loss = loss;
  o.seed = seed;
  hpt::Mlp<Space, double> net(o);
  const int rows = 6;
  net.reserve_batch(rows);
  auto& store = net.parameters();
  const Vec theta = download(store.values());
  const HostBatch hb = make_batch(layers, act, theta, rows, seed);
  double min_abs = 0;
  host_forward(layers, act, theta, hb.x, &min_abs);
  ASSERT_GT(min_abs, 1e-3) << "no batch away from the relu kinks";
  hpt::Batch<double, Mem> batch;
  batch.x = to_device<Mem, double>(hb.x);
  batch.labels = to_device<Mem>(hb.labels);
  if (loss == LossKind::MeanSquaredError && !onehot)
    batch.targets = to_device<Mem, double>(hb.targets);

  net.forward(batch);
  net.backward(batch);
  const Vec analytic = download(store.gradients());

  auto values = store.values();
  auto hv = Kokkos::create_mirror_view(values);
  Kokkos::deep_copy(hv, values);
  const double h = 1e-5;
  const std::string what = net.summary() + (onehot ? " (one-hot targets)" : "");
  for (int t = 0; t < store.num_tensors(); ++t) {
    const auto& info = store.tensor(t);
    double largest = 0;
    for (std::size_t k = info.offset; k < info.offset + info.size; ++k) {
      const double keep = hv(k);
      hv(k) = keep + h;
      Kokkos::deep_copy(values, hv);
      const double plus = net.forward(batch).loss;
      hv(k) = keep - h;
      Kokkos::deep_copy(values, hv);
      const double minus = net.forward(batch).loss;
      hv(k) = keep;
      const double numeric = (plus - minus) / (2 * h);
      ASSERT_TRUE(hpt::test::near_rel(analytic[k], numeric, 1e-7))
          << what << ": " << info.name << " element " << k - info.offset;
      largest = std::max(largest, std::fabs(numeric));
    }
    Kokkos::deep_copy(values, hv);
    EXPECT_GT(largest, 1e-4) << what << ": " << info.name << " has no gradient to check";
  }
}

TYPED_TEST(MlpGradcheck, CrossEntropy) {
  unsigned seed = 200;
  for (const auto& layers : kNets)
    for (Activation act : kActs)
      gradcheck<TypeParam>(layers, act, LossKind::CrossEntropy, false, ++seed);
}

TYPED_TEST(MlpGradcheck, MeanSquaredError) {
  unsigned seed = 300;
  for (const auto& layers : kNets)
    for (Activation act : kActs) {
      gradcheck<TypeParam>(layers, act, LossKind::MeanSquaredError, false, ++seed);
      gradcheck<TypeParam>(layers, act, LossKind::MeanSquaredError, true, ++seed);
    }
}

}  // namespace
