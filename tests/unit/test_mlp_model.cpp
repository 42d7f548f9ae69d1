// The mlp style around the numerics: deck options, initialisation, misuse, and a short training run
// with the optimizers (properties, not reference values).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/model/mlp.hpp"
#include "physics-style-modules/model/register.hpp"
#include "physics-style-modules/optimizer/adam.hpp"
#include "physics-style-modules/optimizer/sgd.hpp"
#include "test_support.hpp"

namespace {

using hpt::Activation;

template <class View>
std::vector<double> download(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> x(v.extent(0));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(h(i));
  return x;
}

std::string input_error_of(const std::string& layers) {
  try {
    hpt::parse_layer_sizes(layers, "model.layers");
  } catch (const hpt::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MlpOptions, LayerSizes) {
  EXPECT_EQ(hpt::parse_layer_sizes("64,128,10", "model.layers"), (std::vector<int>{64, 128, 10}));
  EXPECT_EQ(hpt::parse_layer_sizes(" 2 , 3 ", "model.layers"), (std::vector<int>{2, 3}));
  for (const char* bad : {"", "64", "64,,10", "64,x,10", "0,5", "-3,4", "4,5,", "1e3,4"}) {
    const std::string msg = input_error_of(bad);
    EXPECT_NE(msg.find("model.layers"), std::string::npos) << "'" << bad << "': " << msg;
    EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
  }
}

hpt::OptionSchema model_schema() {
  hpt::OptionSchema s;
  hpt::declare_model_options(s);
  s.add_int("run.seed", 1, "seed");
  return s;
}

TEST(MlpOptions, BuiltFromTheDeck) {
  const auto schema = model_schema();
  hpt::Registry<hpt::Model> reg("model");
  hpt::register_model_styles(reg);
  hpt::Config c(schema);
  c.set("model.layers", "4, 8, 3", "test");
  c.set("model.activation", "tanh", "test");
  auto m = reg.create("mlp", c);
  EXPECT_EQ(m->input_size(), 4);
  EXPECT_EQ(m->output_size(), 3);
  EXPECT_EQ(m->parameters().size(), std::size_t(4 * 8 + 8 + 8 * 3 + 3));
  EXPECT_EQ(m->parameters().num_tensors(), 4);
  EXPECT_EQ(m->parameters().tensor(2).name, "dense1.weight");
  EXPECT_NE(m->summary().find("mlp 4-8-3 tanh cross_entropy"), std::string::npos) << m->summary();
  c.set("model.layers", "4,8,1", "test");
  try {
    reg.create("mlp", c);
    FAIL() << "cross-entropy with one output accepted";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.loss"), std::string::npos);
  }
  c.set("model.loss", "mse", "test");
  EXPECT_EQ(reg.create("mlp", c)->output_size(), 1);
  c.set("model.layers", "4;8", "test");
  EXPECT_THROW(reg.create("mlp", c), hpt::InputError);
}

template <class C>
class MlpInit : public ::testing::Test {};
TYPED_TEST_SUITE(MlpInit, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// He: normal with std sqrt(2/fan_in); Glorot: uniform within sqrt(6/(fan_in+fan_out)); biases 0.
TYPED_TEST(MlpInit, Statistics) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  for (auto act : {Activation::Relu, Activation::Tanh}) {
    hpt::MlpOptions o;
    o.layers = {400, 300, 10};
    o.activation = act;  // auto: He for relu, Glorot for tanh
    hpt::Mlp<Space, Real> net(o);
    const auto& store = net.parameters();
    const auto w = download(store.value_vector(0));
    double mean = 0, sq = 0, maxabs = 0;
    for (double v : w) mean += v, sq += v * v, maxabs = std::max(maxabs, std::fabs(v));
    mean /= double(w.size());
    const double var = sq / double(w.size()) - mean * mean;
    if (act == Activation::Relu) {
      EXPECT_NEAR(std::sqrt(var), std::sqrt(2.0 / 400), 0.02 * std::sqrt(2.0 / 400));
    } else {
      const double bound = std::sqrt(6.0 / 700);
      EXPECT_LE(maxabs, bound);
      EXPECT_NEAR(var, bound * bound / 3, 0.03 * bound * bound / 3);
    }
    EXPECT_NEAR(mean, 0.0, 0.02 * std::sqrt(var));
    for (double b : download(store.value_vector(1))) EXPECT_EQ(b, 0.0);
  }
}

// The same seed gives the same parameters on every backend; another seed gives others.
TYPED_TEST(MlpInit, SameOnEveryBackend) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::MlpOptions o;
  o.layers = {7, 9, 3};
  o.activation = Activation::Gelu;
  o.seed = 77;
  hpt::Mlp<Space, Real> net(o);
  hpt::Mlp<hpt::test::HostReference, Real> serial(o);
  const auto a = download(net.parameters().values());
  EXPECT_EQ(a, download(serial.parameters().values()));
  net.initialize(78);
  EXPECT_NE(a, download(net.parameters().values()));
}

TEST(MlpMisuse, InternalErrors) {
  hpt::MlpOptions o;
  o.layers = {3, 4, 2};
  hpt::Mlp<hpt::test::HostReference, double> net(o);
  hpt::Batch<double, Kokkos::HostSpace> batch;
  hpt::View2<double, Kokkos::HostSpace> x("x", 5, 3);
  hpt::View1<int, Kokkos::HostSpace> labels("labels", 5);
  Kokkos::deep_copy(x, 0.5);
  batch.x = x;
  batch.labels = labels;
  EXPECT_THROW(net.forward(batch), hpt::InternalError);  // no reserve_batch
  net.reserve_batch(4);
  EXPECT_THROW(net.forward(batch), hpt::InternalError);  // 5 rows > 4
  net.reserve_batch(8);
  EXPECT_THROW(net.backward(batch), hpt::InternalError);  // backward before forward
  const auto v = net.forward(batch);
  EXPECT_TRUE(std::isfinite(v.loss));
  EXPECT_NO_THROW(net.backward(batch));
  hpt::Batch<double, Kokkos::HostSpace> other = batch;
  other.x = hpt::View2<double, Kokkos::HostSpace>("x2", 5, 3);
  EXPECT_THROW(net.backward(other), hpt::InternalError);  // not the batch of the forward
}

// Two interleaved spirals, 2-32-2, trained with each optimizer: the loss falls well below the
// initial one and accuracy rises (docs/method.md#training-problems in miniature).
template <class C>
class MlpTraining : public ::testing::Test {};
TYPED_TEST_SUITE(MlpTraining, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(MlpTraining, LossDecreasesWithEachOptimizer) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int n = 128;
  hpt::View2<Real, Mem> x("x", n, 2);
  hpt::View1<int, Mem> y("y", n);
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  std::mt19937 gen(5);
  std::normal_distribution<double> noise(0.0, 0.05);
  for (int i = 0; i < n; ++i) {
    const int c = i % 2;
    const double r = 0.1 + 0.9 * double(i / 2) / (n / 2), a = 3.0 * r + c * 3.14159;
    hx(i, 0) = Real(r * std::cos(a) + noise(gen));
    hx(i, 1) = Real(r * std::sin(a) + noise(gen));
    hy(i) = c;
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);
  hpt::Batch<Real, Mem> batch;
  batch.x = x;
  batch.labels = y;
  std::vector<std::unique_ptr<hpt::OptimizerBase<Space, Real>>> opts;
  opts.push_back(std::make_unique<hpt::Sgd<Space, Real>>(hpt::SgdOptions{0.9, true, 0.0, 5.0}));
  opts.push_back(std::make_unique<hpt::Adam<Space, Real>>(hpt::AdamOptions{}));
  const double lrs[] = {0.1, 0.02};
  for (std::size_t k = 0; k < opts.size(); ++k) {
    hpt::MlpOptions o;
    o.layers = {2, 32, 2};
    o.activation = Activation::Tanh;
    hpt::Mlp<Space, Real> net(o);
    net.reserve_batch(n);
    opts[k]->bind(net.parameters());
    const double initial = net.forward(batch).loss;
    hpt::LossValue last;
    for (int step = 0; step < 300; ++step) {
      last = net.forward(batch);
      net.backward(batch);
      const auto t = opts[k]->step(lrs[k]);
      ASSERT_TRUE(t.applied);
      ASSERT_GT(t.grad_norm, 0.0);
    }
    last = net.forward(batch);
    EXPECT_LT(last.loss, 0.5 * initial) << opts[k]->summary();
    EXPECT_GT(last.accuracy, 0.8) << opts[k]->summary();
  }
}

}  // namespace
