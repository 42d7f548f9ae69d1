// Truncated BPTT of the RSSM ensemble (kernels/rssm_bptt.hpp): the forward's window loss against
// a host loop written here, and the backward's gradient of every parameter tensor against central
// finite differences of the forward, in double, for both GRU conventions.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/rssm_bptt.hpp"
#include "physics-style-modules/dynamics/rssm_model.hpp"
#include "test_support.hpp"

namespace {

using hpt::GruReset;
using Vec = std::vector<double>;

struct Sizes {
  int E, H, S, I, K;
};

// The window's data on the host: x (K, I), y (K), h0 (E, H), weight (E, K), eps (E, K, S).
struct HostWindow {
  Vec x, y, h0, weight, eps;
  int steps = 0;
};

// Read access to the flat parameter vector in the tensor order of RssmParams::for_each_tensor.
class HostParams {
 public:
  HostParams(const Vec& theta, const Sizes& z) : th_(theta), z_(z) {
    const std::size_t E = std::size_t(z.E), H = std::size_t(z.H), S = std::size_t(z.S),
                      I = std::size_t(z.I);
    const std::size_t sizes[] = {E * 3 * H * I,   E * 3 * H * H, E * 3 * H, E * 3 * H,
                                 E * S * H,       E * S,         E * S * H, E * S,
                                 E * 2 * (H + S), E * 2};
    std::size_t o = 0;
    for (int i = 0; i < 10; ++i) {
      off_[i] = o;
      o += sizes[i];
    }
    EXPECT_EQ(o, theta.size());
  }
  double w_ih(int m, int q, int k) const { return at(0, (m * 3 * z_.H + q) * z_.I + k); }
  double w_hh(int m, int q, int k) const { return at(1, (m * 3 * z_.H + q) * z_.H + k); }
  double b_ih(int m, int q) const { return at(2, m * 3 * z_.H + q); }
  double b_hh(int m, int q) const { return at(3, m * 3 * z_.H + q); }
  double A(int m, int i, int j) const { return at(4, (m * z_.S + i) * z_.H + j); }
  double a(int m, int i) const { return at(5, m * z_.S + i); }
  double B(int m, int i, int j) const { return at(6, (m * z_.S + i) * z_.H + j); }
  double b(int m, int i) const { return at(7, m * z_.S + i); }
  double C(int m, int o, int q) const { return at(8, (m * 2 + o) * (z_.H + z_.S) + q); }
  double d(int m, int o) const { return at(9, m * 2 + o); }

 private:
  double at(int tensor, int i) const { return th_[off_[tensor] + std::size_t(i)]; }
  const Vec& th_;
  Sizes z_;
  std::size_t off_[10];
};

double sigmoid(double a) {
  return 1.0 / (1.0 + std::exp(-a));
}
double softplus(double a) {
  return std::log1p(std::exp(a));
}

// One GRU step of member m, as nn.GRUCell (After) or the prototype (Before).
Vec host_gru(const HostParams& p, const Sizes& z, GruReset reset, int m, const double* x,
             const Vec& h) {
  const int H = z.H;
  auto wx = [&](int q) {
    double s = p.b_ih(m, q);
    for (int k = 0; k < z.I; ++k) s += p.w_ih(m, q, k) * x[k];
    return s;
  };
  auto uh = [&](int q, const Vec& v) {
    double s = p.b_hh(m, q);
    for (int k = 0; k < H; ++k) s += p.w_hh(m, q, k) * v[std::size_t(k)];
    return s;
  };
  const std::size_t units = std::size_t(H);
  Vec r(units), out(units), rh(units);
  for (int j = 0; j < H; ++j) r[std::size_t(j)] = sigmoid(wx(j) + uh(j, h));
  for (int j = 0; j < H; ++j) rh[std::size_t(j)] = r[std::size_t(j)] * h[std::size_t(j)];
  for (int j = 0; j < H; ++j) {
    const double zj = sigmoid(wx(H + j) + uh(H + j, h));
    const std::size_t u = std::size_t(j);
    if (reset == GruReset::After) {
      const double n = std::tanh(wx(2 * H + j) + r[u] * uh(2 * H + j, h));
      out[u] = (1 - zj) * n + zj * h[u];
    } else {
      const double n = std::tanh(wx(2 * H + j) + uh(2 * H + j, rh));
      out[u] = (1 - zj) * h[u] + zj * n;
    }
  }
  return out;
}

// Window loss of every member: sum_t w (NLL + beta KL) / K with the prior sample and loss head.
Vec host_window_loss(const Vec& theta, const Sizes& z, GruReset reset, const HostWindow& w,
                     double beta) {
  const HostParams p(theta, z);
  Vec loss(std::size_t(z.E), 0.0);
  for (int m = 0; m < z.E; ++m) {
    Vec h(w.h0.begin() + m * z.H, w.h0.begin() + (m + 1) * z.H);
    for (int t = 0; t < w.steps; ++t) {
      h = host_gru(p, z, reset, m, &w.x[std::size_t(t * z.I)], h);
      Vec s(std::size_t(z.S));
      double kl = 0;
      for (int i = 0; i < z.S; ++i) {
        double mu = p.a(m, i), pre = p.b(m, i);
        for (int j = 0; j < z.H; ++j) {
          mu += p.A(m, i, j) * h[std::size_t(j)];
          pre += p.B(m, i, j) * h[std::size_t(j)];
        }
        const double sigma = softplus(pre) + 1e-4;
        s[std::size_t(i)] = mu + sigma * w.eps[std::size_t((m * z.K + t) * z.S + i)];
        kl += 0.5 * (sigma * sigma + mu * mu - 1) - std::log(sigma);
      }
      double mu_d = p.d(m, 0), lv = p.d(m, 1);
      for (int q = 0; q < z.H + z.S; ++q) {
        const double c = q < z.H ? h[std::size_t(q)] : s[std::size_t(q - z.H)];
        mu_d += p.C(m, 0, q) * c;
        lv += p.C(m, 1, q) * c;
      }
      lv = std::min(20.0, std::max(-20.0, lv));
      const double r = w.y[std::size_t(t)] - mu_d;
      const double nll = 0.5 * (lv + r * r * std::exp(-lv));
      loss[std::size_t(m)] += w.weight[std::size_t(m * z.K + t)] * (nll + beta * kl) / z.K;
    }
  }
  return loss;
}

Vec random_vec(std::size_t n, std::mt19937& gen, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Vec v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

// Parameters of moderate size (log variances of O(1)); the last member's log-variance bias puts
// its head beyond the clamp, where the log variance has no gradient.
Vec test_parameters(std::size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  Vec theta = random_vec(count, gen, 0.5);
  theta.back() = 25.0;  // loss_head.b (E-1, 1): the last element of the last tensor
  return theta;
}

HostWindow test_window(const Sizes& z, int steps, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  HostWindow w;
  w.steps = steps;
  w.x = random_vec(std::size_t(z.K * z.I), gen, 1.0);
  w.y = random_vec(std::size_t(z.K), gen, 0.5);
  w.h0 = random_vec(std::size_t(z.E * z.H), gen, 0.8);
  for (int m = 0; m < z.E; ++m)  // fixed non-negative weights, one of them zero
    for (int t = 0; t < z.K; ++t)
      w.weight.push_back(t < steps ? double((m + 2 * t) % 3) * 0.75 : 0);
  w.eps.resize(std::size_t(z.E * z.K * z.S));
  for (auto& e : w.eps) e = normal(gen);
  return w;
}

template <class View>
void upload_flat(const View& v, const Vec& x) {
  auto h = Kokkos::create_mirror_view(v);
  ASSERT_EQ(h.span(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) h.data()[i] = typename View::value_type(x[i]);
  Kokkos::deep_copy(v, h);
}

template <class Real, class Mem>
hpt::RssmWindow<Real, Mem> device_window(const Sizes& z, const HostWindow& hw) {
  hpt::RssmWindow<Real, Mem> w(z.E, z.H, z.S, z.I, z.K);
  upload_flat(w.x, hw.x);
  upload_flat(w.y, hw.y);
  upload_flat(w.h0, hw.h0);
  upload_flat(w.weight, hw.weight);
  upload_flat(w.eps, hw.eps);
  w.steps = hw.steps;
  return w;
}

constexpr double kBeta = 0.3;  // larger than the default, so the KL gradients are well exercised
const Sizes kSizes{3, 5, 3, 4, 4};
const GruReset kResets[] = {GruReset::After, GruReset::Before};
const char* name(GruReset r) {
  return r == GruReset::After ? "after" : "before";
}

// ---- forward against the host loop, every backend and precision

template <class C>
class RssmBpttForward : public ::testing::Test {};
TYPED_TEST_SUITE(RssmBpttForward, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RssmBpttForward, WindowLossEqualsHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const Sizes z = kSizes;
  hpt::RssmModel<Real, Mem> model(z.E, z.H, z.S, z.I);
  // Rounded to Real first, so host and device start from the same numbers.
  Vec theta = test_parameters(model.store.size(), 7);
  for (auto& v : theta) v = double(Real(v));
  upload_flat(model.store.values(), theta);
  for (const int steps : {z.K, z.K - 1}) {
    HostWindow hw = test_window(z, steps, 11);
    for (auto* v : {&hw.x, &hw.y, &hw.h0, &hw.weight, &hw.eps})
      for (auto& e : *v) e = double(Real(e));
    const auto window = device_window<Real, Mem>(z, hw);
    hpt::RssmBpttWorkspace<Real, Mem> ws(z.E, z.H, z.S, z.K);
    hpt::View1<Real, Mem> loss("loss", std::size_t(z.E));
    for (const GruReset reset : kResets) {
      hpt::rssm_bptt_forward(Space(), model.params, reset, window, kBeta, ws, loss);
      const Vec got = hpt::test::download_values(loss);
      const Vec want = host_window_loss(theta, z, reset, hw, kBeta);
      for (int m = 0; m < z.E; ++m)
        EXPECT_TRUE(hpt::test::near_rel(got[std::size_t(m)], want[std::size_t(m)],
                                        hpt::test::tolerance<Real>(1e4)))
            << name(reset) << " member " << m << " steps " << steps;
    }
  }
}

// ---- analytic gradient against central finite differences, double on every backend

template <class Space>
class RssmBpttGradient : public ::testing::Test {};
TYPED_TEST_SUITE(RssmBpttGradient, hpt::test::Backends, hpt::test::TypedTestNames);

// Loss of member m of the device forward at theta.
template <class Space>
double device_member_loss(hpt::RssmModel<double, typename Space::memory_space>& model,
                          const Vec& theta, GruReset reset, int m,
                          const hpt::RssmWindow<double, typename Space::memory_space>& window,
                          const hpt::RssmBpttWorkspace<double, typename Space::memory_space>& ws,
                          const hpt::View1<double, typename Space::memory_space>& loss) {
  upload_flat(model.store.values(), theta);
  hpt::rssm_bptt_forward(Space(), model.params, reset, window, kBeta, ws, loss);
  return hpt::test::download_values(loss)[std::size_t(m)];
}

// Every element's gradient against the fourth-order central difference of its member's loss
// (step 1e-4: truncation ~1e-16, rounding ~1e-11), relative error below 1e-6 (absolute below 1e-10
// where the gradient is under 1e-4).
TYPED_TEST(RssmBpttGradient, EveryTensorMatchesFiniteDifferences) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const Sizes z = kSizes;
  hpt::RssmModel<double, Mem> model(z.E, z.H, z.S, z.I);
  const Vec theta = test_parameters(model.store.size(), 3);
  const auto window = device_window<double, Mem>(z, test_window(z, z.K, 5));
  hpt::RssmBpttWorkspace<double, Mem> ws(z.E, z.H, z.S, z.K);
  hpt::View1<double, Mem> loss("loss", std::size_t(z.E));
  const double h = 1e-4;

  for (const GruReset reset : kResets) {
    // Stale values in the gradient buffer must be overwritten, not added to.
    Kokkos::deep_copy(model.store.gradients(), 123.0);
    upload_flat(model.store.values(), theta);
    hpt::rssm_bptt_forward(Space(), model.params, reset, window, kBeta, ws, loss);
    hpt::rssm_bptt_backward(Space(), model.params, model.grads, reset, window, kBeta, ws);
    const Vec grad = hpt::test::download_values(model.store.gradients());
    for (const auto& t : model.store.tensors()) {
      double largest = 0;
      for (std::size_t i = t.offset; i < t.offset + t.size; ++i) {
        const int m = int((i - t.offset) / (t.size / std::size_t(z.E)));  // E leads every shape
        const auto f = [&](double step) {
          Vec moved = theta;
          moved[i] += step;
          return device_member_loss<Space>(model, moved, reset, m, window, ws, loss);
        };
        const double fd = (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h);
        const double rel =
            std::fabs(grad[i] - fd) / std::max({std::fabs(fd), std::fabs(grad[i]), 1e-4});
        largest = std::max(largest, std::fabs(fd));
        EXPECT_LT(rel, 1e-6) << name(reset) << " " << t.name << " element " << i - t.offset
                             << ": analytic " << grad[i] << ", finite difference " << fd;
      }
      // A tensor whose gradient vanishes everywhere would check nothing.
      EXPECT_GT(largest, 1e-3) << name(reset) << " " << t.name;
    }
  }
}

// Beyond the clamp the log variance is constant: its bias gets no gradient there.
TYPED_TEST(RssmBpttGradient, ClampedLogVarianceHasNoGradient) {
  using Space = TypeParam;
  using Mem = typename Space::memory_space;
  const Sizes z = kSizes;
  hpt::RssmModel<double, Mem> model(z.E, z.H, z.S, z.I);
  upload_flat(model.store.values(), test_parameters(model.store.size(), 3));
  const auto window = device_window<double, Mem>(z, test_window(z, z.K, 5));
  hpt::RssmBpttWorkspace<double, Mem> ws(z.E, z.H, z.S, z.K);
  hpt::View1<double, Mem> loss("loss", std::size_t(z.E));
  hpt::rssm_bptt_forward(Space(), model.params, GruReset::After, window, kBeta, ws, loss);
  hpt::rssm_bptt_backward(Space(), model.params, model.grads, GruReset::After, window, kBeta, ws);
  const auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), model.grads.loss_head_b);
  EXPECT_EQ(d(z.E - 1, 1), 0.0);
  EXPECT_NE(d(0, 1), 0.0);
}

}  // namespace
