// Flat parameter store, optimizer update kernels and their telemetry (kernels/parameter_store.hpp,
// kernels/optimizer_kernels.hpp, physics-style-modules/optimizer) against host reference loops
// written here that follow PyTorch's torch.optim.SGD and torch.optim.AdamW step by step, in double.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "kernels/parameter_store.hpp"
#include "physics-style-modules/optimizer/adam.hpp"
#include "physics-style-modules/optimizer/register.hpp"
#include "physics-style-modules/optimizer/sgd.hpp"
#include "test_support.hpp"

namespace {

using Vec = std::vector<double>;

// Four tensors; the first spans two chunks of the store's chunk table.
template <class Real, class Mem>
void declare_tensors(hpt::ParameterStore<Real, Mem>& s) {
  s.add_matrix("w1", 90, 50);
  s.add_vector("b1", 90);
  s.add_matrix("w2", 3, 90);
  s.add_vector("b2", 3);
  s.allocate();
}

using hpt::test::download_values;
using hpt::test::upload_values;

// Uniform values rounded to Real, so host and device start from identical numbers.
template <class Real>
Vec random_vec(std::size_t n, std::mt19937& gen, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Vec x(n);
  for (auto& v : x) v = double(Real(u(gen)));
  return x;
}

double norm(const Vec& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}
// Population std of |x| (abs) or of x over the elements.
double spread(const Vec& x, bool abs) {
  double s = 0, q = 0;
  for (double v : x) s += abs ? std::fabs(v) : v, q += v * v;
  const double n = double(x.size()), mean = s / n;
  return std::sqrt(std::fmax(0.0, q / n - mean * mean));
}
double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Host references, PyTorch semantics (dampening 0; AdamW with decoupled decay).
struct HostSgd {
  double mu = 0, wd = 0;
  bool nesterov = false;
  Vec buf;
  long steps = 0;
  void step(Vec& th, const Vec& grad, double lr, double scale) {
    if (buf.empty()) buf.assign(th.size(), 0.0);
    for (std::size_t k = 0; k < th.size(); ++k) {
      double g = scale * grad[k] + wd * th[k];
      if (mu != 0) {
        buf[k] = steps == 0 ? g : mu * buf[k] + g;
        g = nesterov ? g + mu * buf[k] : buf[k];
      }
      th[k] -= lr * g;
    }
    ++steps;
  }
  double moment1() const { return mu != 0 ? norm(buf) : 0.0; }
  double moment2() const { return 0.0; }
  double moment1_std() const { return mu != 0 ? spread(buf, true) : 0.0; }
  double moment2_std() const { return 0.0; }
  double effective_lr(double lr) const { return lr; }
};

struct HostAdamW {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0;
  Vec m, v;
  long steps = 0;
  void step(Vec& th, const Vec& grad, double lr, double scale) {
    if (m.empty()) m.assign(th.size(), 0.0), v.assign(th.size(), 0.0);
    ++steps;
    const double bc1 = 1 - std::pow(b1, double(steps)), bc2 = 1 - std::pow(b2, double(steps));
    for (std::size_t k = 0; k < th.size(); ++k) {
      const double g = scale * grad[k];
      th[k] *= 1 - lr * wd;
      m[k] = b1 * m[k] + (1 - b1) * g;
      v[k] = b2 * v[k] + (1 - b2) * g * g;
      th[k] -= (lr / bc1) * m[k] / (std::sqrt(v[k]) / std::sqrt(bc2) + eps);
    }
  }
  double moment1() const {
    double s = 0;
    for (double x : m) s += std::fabs(x);
    return s / double(m.size());
  }
  double moment2() const {
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
  }
  double moment1_std() const { return spread(m, true); }
  double moment2_std() const { return spread(v, false); }
  double effective_lr(double lr) const {
    return lr * std::sqrt(1 - std::pow(b2, double(steps))) / (1 - std::pow(b1, double(steps)));
  }
};

template <class C>
class Optim : public ::testing::Test {};
TYPED_TEST_SUITE(Optim, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Runs `steps` updates with fresh random gradients (scaled by grad_scale) on device and host and
// compares parameters, state and every telemetry value after each step.
template <class Space, class Real, class HostRef>
void compare_steps(hpt::OptimizerBase<Space, Real>& opt, HostRef ref, double clip_norm,
                   double grad_scale, int steps, unsigned seed) {
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  opt.bind(store);
  std::mt19937 gen(seed);
  Vec th = random_vec<Real>(store.size(), gen, 1.0);
  upload_values(store.values(), th);
  Vec prev_delta(th.size(), 0.0);
  const double tol_param = hpt::test::tolerance<Real>(50);
  const double tol_stat = hpt::test::tolerance<Real>(1e4);
  for (int s = 0; s < steps; ++s) {
    Vec grad = random_vec<Real>(store.size(), gen, grad_scale);
    upload_values(store.gradients(), grad);
    const double lr = 0.05 * (1.0 + 0.1 * s);
    const auto t = opt.step(lr);

    // Host: gradient norms, clip factor, the update and its telemetry.
    const double gnorm = norm(grad);
    const double scale = clip_norm > 0 ? std::fmin(1.0, clip_norm / (gnorm + 1e-6)) : 1.0;
    const Vec before = th;
    ref.step(th, grad, lr, scale);
    Vec delta(th.size());
    for (std::size_t k = 0; k < th.size(); ++k) delta[k] = th[k] - before[k];

    EXPECT_TRUE(t.applied);
    EXPECT_EQ(t.step, s + 1);
    EXPECT_EQ(t.lr, lr);
    EXPECT_TRUE(hpt::test::near_rel(t.grad_norm, gnorm, tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.clip_scale / scale, 1.0, tol_stat)) << "step " << s;
    ASSERT_EQ(t.tensor_grad_norms.size(), std::size_t(store.num_tensors()));
    for (int i = 0; i < store.num_tensors(); ++i) {
      const auto& info = store.tensor(i);
      const Vec part(grad.begin() + long(info.offset),
                     grad.begin() + long(info.offset + info.size));
      EXPECT_TRUE(hpt::test::near_rel(t.tensor_grad_norms[std::size_t(i)], norm(part), tol_stat))
          << info.name;
    }
    EXPECT_TRUE(hpt::test::near_rel(t.update_norm, norm(delta), tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.weight_norm, norm(th), tol_stat)) << "step " << s;
    const double cos_ref = s == 0 ? 0.0 : dot(delta, prev_delta) / (norm(delta) * norm(prev_delta));
    EXPECT_TRUE(hpt::test::near_rel(t.update_cos, cos_ref, tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.moment1, ref.moment1(), tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.moment2, ref.moment2(), tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.moment1_std, ref.moment1_std(), tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.moment2_std, ref.moment2_std(), tol_stat)) << "step " << s;
    EXPECT_TRUE(hpt::test::near_rel(t.effective_lr, ref.effective_lr(lr), tol_stat))
        << "step " << s;
    prev_delta = delta;

    const Vec got = download_values(store.values());
    for (std::size_t k = 0; k < th.size(); ++k)
      ASSERT_TRUE(hpt::test::near_rel(got[k], th[k], tol_param)) << "step " << s << " k " << k;
  }
}

TYPED_TEST(Optim, SgdPlainMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Sgd<Space, Real> opt(hpt::SgdOptions{0.0, false, 0.0, 0.0});
  compare_steps<Space, Real>(opt, HostSgd{}, 0.0, 1.0, 5, 31);
}

TYPED_TEST(Optim, SgdMomentumMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Sgd<Space, Real> opt(hpt::SgdOptions{0.9, false, 0.0, 0.0});
  HostSgd ref;
  ref.mu = 0.9;
  compare_steps<Space, Real>(opt, ref, 0.0, 1.0, 6, 32);
}

TYPED_TEST(Optim, SgdNesterovWeightDecayMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Sgd<Space, Real> opt(hpt::SgdOptions{0.8, true, 0.01, 0.0});
  HostSgd ref;
  ref.mu = 0.8;
  ref.nesterov = true;
  ref.wd = 0.01;
  compare_steps<Space, Real>(opt, ref, 0.0, 1.0, 6, 33);
}

TYPED_TEST(Optim, SgdWeightDecayMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Sgd<Space, Real> opt(hpt::SgdOptions{0.0, false, 0.05, 0.0});
  HostSgd ref;
  ref.wd = 0.05;
  compare_steps<Space, Real>(opt, ref, 0.0, 1.0, 4, 34);
}

TYPED_TEST(Optim, AdamWMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Adam<Space, Real> opt(hpt::AdamOptions{0.9, 0.999, 1e-8, 0.01, 0.0});
  HostAdamW ref;
  ref.wd = 0.01;
  compare_steps<Space, Real>(opt, ref, 0.0, 1.0, 6, 35);
}

TYPED_TEST(Optim, AdamNoDecayOtherBetasMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Adam<Space, Real> opt(hpt::AdamOptions{0.8, 0.95, 1e-6, 0.0, 0.0});
  HostAdamW ref;
  ref.b1 = 0.8;
  ref.b2 = 0.95;
  ref.eps = 1e-6;
  compare_steps<Space, Real>(opt, ref, 0.0, 1.0, 5, 36);
}

// Large gradients (norm ~ 1e3) clipped to global norm 1 before the update.
TYPED_TEST(Optim, ClipByGlobalNormMatchesHost) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  hpt::Sgd<Space, Real> sgd(hpt::SgdOptions{0.9, false, 0.0, 1.0});
  HostSgd ref;
  ref.mu = 0.9;
  compare_steps<Space, Real>(sgd, ref, 1.0, 30.0, 4, 37);
  hpt::Adam<Space, Real> adam(hpt::AdamOptions{0.9, 0.999, 1e-8, 0.0, 2.5});
  compare_steps<Space, Real>(adam, HostAdamW{}, 2.5, 30.0, 4, 38);
  // A clip threshold above the norm leaves the gradient alone (scale 1).
  hpt::Sgd<Space, Real> loose(hpt::SgdOptions{0.0, false, 0.0, 1e6});
  compare_steps<Space, Real>(loose, HostSgd{}, 1e6, 1.0, 2, 39);
}

// A non-finite gradient changes nothing: parameters, state and step counter stay as they were.
TYPED_TEST(Optim, NonFiniteGradientSkipsTheStep) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  hpt::Adam<Space, Real> opt(hpt::AdamOptions{});
  opt.bind(store);
  std::mt19937 gen(40);
  upload_values(store.values(), random_vec<Real>(store.size(), gen, 1.0));
  upload_values(store.gradients(), random_vec<Real>(store.size(), gen, 1.0));
  opt.step(0.01);
  const Vec theta = download_values(store.values());
  const Vec m = download_values(opt.state_views()[0].view);
  Vec grad = random_vec<Real>(store.size(), gen, 1.0);
  grad[123] = std::nan("");
  upload_values(store.gradients(), grad);
  const auto t = opt.step(0.01);
  EXPECT_FALSE(t.applied);
  EXPECT_TRUE(std::isnan(t.grad_norm));
  EXPECT_EQ(t.update_norm, 0.0);
  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_EQ(download_values(store.values()), theta);
  EXPECT_EQ(download_values(opt.state_views()[0].view), m);
}

// Binds `opt` to `store`, draws random parameters and takes `steps` steps of lr 0.02 on random
// gradients, all from `gen`, so that every state buffer holds something.
template <class Space, class Real, class Mem>
void bind_and_step(hpt::OptimizerBase<Space, Real>& opt, hpt::ParameterStore<Real, Mem>& store,
                   std::mt19937& gen, int steps) {
  opt.bind(store);
  upload_values(store.values(), random_vec<Real>(store.size(), gen, 1.0));
  for (int s = 0; s < steps; ++s) {
    upload_values(store.gradients(), random_vec<Real>(store.size(), gen, 1.0));
    opt.step(0.02);
  }
}

// Snapshot of parameters + optimizer state + step counter, then restore: the same next step gives
// bit-identical parameters (what a rollback of a Predict block relies on).
TYPED_TEST(Optim, RollbackReproducesTheStep) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  std::vector<std::unique_ptr<hpt::OptimizerBase<Space, Real>>> opts;
  opts.push_back(std::make_unique<hpt::Adam<Space, Real>>(hpt::AdamOptions{}));
  opts.push_back(std::make_unique<hpt::Sgd<Space, Real>>(hpt::SgdOptions{0.9, true, 1e-3, 0.0}));
  for (auto& opt : opts) {
    std::mt19937 gen(41);
    bind_and_step(*opt, store, gen, 3);
    auto theta_snap = store.make_buffer("snap");
    store.snapshot(theta_snap);
    std::vector<hpt::View1<Real, Mem>> state_snap;
    for (const auto& b : opt->state_views()) {
      state_snap.push_back(store.make_buffer("state_" + b.name));
      Kokkos::deep_copy(state_snap.back(), b.view);
    }
    const long count = opt->step_count();
    const Vec grad = random_vec<Real>(store.size(), gen, 1.0);
    upload_values(store.gradients(), grad);
    const auto first = opt->step(0.02);
    const Vec after = download_values(store.values());
    // Some unrelated steps, then roll back and repeat.
    for (int s = 0; s < 2; ++s) {
      upload_values(store.gradients(), random_vec<Real>(store.size(), gen, 1.0));
      opt->step(0.5);
    }
    store.restore(theta_snap);
    const auto views = opt->state_views();
    for (std::size_t i = 0; i < views.size(); ++i) Kokkos::deep_copy(views[i].view, state_snap[i]);
    opt->set_step_count(count);
    upload_values(store.gradients(), grad);
    const auto second = opt->step(0.02);
    EXPECT_EQ(download_values(store.values()), after) << opt->summary();
    EXPECT_EQ(second.update_norm, first.update_norm);
    EXPECT_EQ(second.update_cos, first.update_cos);
  }
}

TYPED_TEST(Optim, StateViewsAreNamedFlatBuffers) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  hpt::Adam<Space, Real> adam(hpt::AdamOptions{});
  adam.bind(store);
  std::vector<std::string> names;
  for (const auto& b : adam.state_views()) {
    names.push_back(b.name);
    EXPECT_EQ(b.view.extent(0), store.size());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"m", "v", "prev_update"}));
  hpt::Sgd<Space, Real> plain(hpt::SgdOptions{});
  plain.bind(store);
  EXPECT_EQ(plain.state_views().size(), 1u);  // no momentum buffer without momentum
  hpt::Sgd<Space, Real> momentum(hpt::SgdOptions{0.5, false, 0.0, 0.0});
  momentum.bind(store);
  EXPECT_EQ(momentum.state_views()[0].name, "momentum");
  // reset_state zeroes the state and the counter.
  std::mt19937 gen(42);
  upload_values(store.gradients(), random_vec<Real>(store.size(), gen, 1.0));
  momentum.step(0.1);
  momentum.reset_state();
  EXPECT_EQ(momentum.step_count(), 0);
  EXPECT_EQ(norm(download_values(momentum.state_views()[0].view)), 0.0);
}

// zero_first_moment zeroes SGD's momentum buffer and Adam's m and nothing else (the other buffers
// and the step counter are kept); the next step then starts the moment from that step's gradient
// alone: SGD's buffer becomes g, Adam's m becomes (1 - beta1) g.
TYPED_TEST(Optim, ZeroFirstMomentRestartsOnlyTheMomentum) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  const double beta1 = 0.8;
  std::vector<std::unique_ptr<hpt::OptimizerBase<Space, Real>>> opts;
  hpt::AdamOptions adam_options;
  adam_options.beta1 = beta1;
  opts.push_back(std::make_unique<hpt::Adam<Space, Real>>(adam_options));
  opts.push_back(std::make_unique<hpt::Sgd<Space, Real>>(hpt::SgdOptions{0.9, false, 0.0, 0.0}));
  for (auto& opt : opts) {
    std::mt19937 gen(43);
    bind_and_step(*opt, store, gen, 3);
    std::vector<Vec> before;
    for (const auto& b : opt->state_views()) before.push_back(download_values(b.view));
    const Vec theta = download_values(store.values());
    opt->zero_first_moment();
    const auto views = opt->state_views();
    const std::string first = views[0].name;
    ASSERT_TRUE(first == "m" || first == "momentum") << opt->summary();
    EXPECT_EQ(norm(download_values(views[0].view)), 0.0) << opt->summary();
    EXPECT_GT(norm(before[0]), 0.0) << opt->summary();
    for (std::size_t i = 1; i < views.size(); ++i)
      EXPECT_EQ(download_values(views[i].view), before[i])
          << opt->summary() << " " << views[i].name;
    EXPECT_EQ(opt->step_count(), 3);
    EXPECT_EQ(download_values(store.values()), theta);

    const Vec grad = random_vec<Real>(store.size(), gen, 1.0);
    upload_values(store.gradients(), grad);
    opt->step(0.02);
    const Vec m = download_values(opt->state_views()[0].view);
    const double factor = first == "m" ? 1.0 - beta1 : 1.0;
    const double tol = std::is_same<Real, float>::value ? 1e-6 : 1e-14;
    for (std::size_t k = 0; k < grad.size(); ++k)
      ASSERT_NEAR(m[k], factor * grad[k], tol * (1.0 + std::fabs(grad[k])))
          << opt->summary() << " element " << k;
  }
}

// ---- the flat store itself

template <class C>
class Store : public ::testing::Test {};
TYPED_TEST_SUITE(Store, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(Store, LayoutViewsAndChunks) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  ASSERT_EQ(store.size(), 4500u + 90u + 270u + 3u);
  std::size_t offset = 0;
  for (int i = 0; i < store.num_tensors(); ++i) {
    EXPECT_EQ(store.tensor(i).offset, offset);
    offset += store.tensor(i).size;
    EXPECT_EQ(store.find(store.tensor(i).name), i);
  }
  EXPECT_EQ(store.find("nope"), -1);
  // The per-tensor views alias the flat buffer: element (r, c) of tensor i is offset + r*cols + c.
  Vec idx(store.size());
  for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = double(k % 1000);
  upload_values(store.values(), idx);
  upload_values(store.gradients(), idx);
  for (int i = 0; i < store.num_tensors(); ++i) {
    const auto& t = store.tensor(i);
    auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), store.value_matrix(i));
    auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), store.grad_matrix(i));
    ASSERT_EQ(int(m.extent(0)), t.rows);
    ASSERT_EQ(int(m.extent(1)), t.cols);
    for (int r = 0; r < t.rows; ++r)
      for (int c = 0; c < t.cols; ++c) {
        ASSERT_EQ(double(m(r, c)), idx[t.offset + std::size_t(r * t.cols + c)]);
        ASSERT_EQ(double(g(r, c)), idx[t.offset + std::size_t(r * t.cols + c)]);
      }
  }
  // Chunks cover the buffer in order, each inside one tensor and at most kChunkSize long.
  const auto& ch = store.chunks();
  auto ct = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ch.tensor);
  auto cb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ch.begin);
  auto ce = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ch.end);
  std::int64_t next = 0;
  for (int c = 0; c < ch.count; ++c) {
    const auto& t = store.tensor(ct(c));
    EXPECT_EQ(cb(c), next);
    EXPECT_GE(cb(c), std::int64_t(t.offset));
    EXPECT_LE(ce(c), std::int64_t(t.offset + t.size));
    const std::int64_t chunk_size = hpt::ParameterStore<Real, Mem>::kChunkSize;
    EXPECT_LE(ce(c) - cb(c), chunk_size);
    next = ce(c);
  }
  EXPECT_EQ(next, std::int64_t(store.size()));
  EXPECT_EQ(ch.count, 5);  // w1 needs two chunks
}

TYPED_TEST(Store, SnapshotAndRestore) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::ParameterStore<Real, Mem> store;
  declare_tensors(store);
  std::mt19937 gen(43);
  const Vec a = random_vec<Real>(store.size(), gen, 1.0);
  upload_values(store.values(), a);
  auto snap = store.make_buffer("snap");
  EXPECT_EQ(norm(download_values(snap)), 0.0);  // new buffers are zero
  store.snapshot(snap);
  upload_values(store.values(), random_vec<Real>(store.size(), gen, 1.0));
  EXPECT_NE(download_values(store.values()), a);
  store.restore(snap);
  EXPECT_EQ(download_values(store.values()), a);
}

TEST(StoreErrors, LayoutMisuseIsAnInternalError) {
  hpt::ParameterStore<double, Kokkos::HostSpace> s;
  s.add_vector("b", 3);
  EXPECT_THROW(s.add_vector("b", 4), hpt::InternalError);
  EXPECT_THROW(s.add_matrix("w", 0, 4), hpt::InternalError);
  s.allocate();
  EXPECT_THROW(s.add_vector("c", 2), hpt::InternalError);
  hpt::View1<double, Kokkos::HostSpace> wrong("wrong", 2);
  EXPECT_THROW(s.snapshot(wrong), hpt::InternalError);
}

// ---- options and registry

hpt::OptionSchema optimizer_schema() {
  hpt::OptionSchema s;
  hpt::declare_optimizer_options(s);
  return s;
}

TEST(OptimizerStyles, BuiltFromTheDeck) {
  const auto schema = optimizer_schema();
  hpt::Registry<hpt::Optimizer> reg("optimizer");
  hpt::register_optimizer_styles(reg);
  hpt::Config c(schema);
  c.set("optimizer.momentum", "0.5", "test");
  c.set("optimizer.nesterov", "true", "test");
  c.set("optimizer.clip_norm", "2", "test");
  auto sgd = reg.create("sgd", c);
  EXPECT_NE(sgd->summary().find("nesterov"), std::string::npos);
  EXPECT_EQ(sgd->clip_norm(), 2.0);
  c.set("optimizer.weight_decay", "0.01", "test");
  auto adam = reg.create("adam", c);
  EXPECT_NE(adam->summary().find("adamw"), std::string::npos);
  EXPECT_THROW(reg.create("lion", c), hpt::InputError);
}

TEST(OptimizerStyles, NesterovWithoutMomentumIsAnInputError) {
  const auto schema = optimizer_schema();
  hpt::Config c(schema);
  c.set("optimizer.momentum", "0", "test");
  c.set("optimizer.nesterov", "true", "test");
  try {
    hpt::sgd_options_from_config(c);
    FAIL() << "no InputError";
  } catch (const hpt::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.nesterov"), std::string::npos);
  }
  EXPECT_THROW(c.set("optimizer.beta1", "1.5", "test"), hpt::InputError);
}

}  // namespace
