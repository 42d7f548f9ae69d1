// The prototype's RSSM (kernels/rssm_prototype.hpp,
// physics-style-modules/dynamics/rssm_prototype.hpp) against a plain host implementation of its
// rules written here: rollouts (strided softmax, exp decode with clamp and floor, only feature 0
// fed back), one online training step (sequential head SGD with the updated head in dh, GRU
// backward with reset before, per-member clipping), and the confidence, including 0.78 on a fresh
// state whose features are NaN.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/rssm_prototype.hpp"
#include "physics-style-modules/dynamics/rssm_prototype.hpp"
#include "test_support.hpp"

namespace {

using Vec = std::vector<double>;

// Host copy of the parameters: per member W (3H x I), U (3H x H), b (3H), rows r, z, n.
struct HostRssm {
  int E, H, S, I;
  std::vector<Vec> W, U, b, h;  // per member; h the latent
  Vec head;                     // H + S

  double sig(double x) const { return 1.0 / (1.0 + std::exp(-x)); }

  // GRU with the reset applied before U_n and h' = (1 - z) h + z n; also returns r, z, n.
  Vec gru(int m, const Vec& hp, const Vec& x, Vec* r_out = nullptr, Vec* z_out = nullptr,
          Vec* n_out = nullptr) const {
    auto pre = [&](int q, const Vec& hv) {
      double a = b[m][q];
      for (int k = 0; k < I; ++k) a += W[m][q * I + k] * x[k];
      for (int k = 0; k < H; ++k) a += U[m][q * H + k] * hv[k];
      return a;
    };
    Vec r(H), z(H), n(H), rh(H), out(H);
    for (int j = 0; j < H; ++j) r[j] = sig(pre(j, hp)), z[j] = sig(pre(H + j, hp));
    for (int j = 0; j < H; ++j) rh[j] = r[j] * hp[j];
    for (int j = 0; j < H; ++j) {
      double a = b[m][2 * H + j];
      for (int k = 0; k < I; ++k) a += W[m][(2 * H + j) * I + k] * x[k];
      for (int k = 0; k < H; ++k) a += U[m][(2 * H + j) * H + k] * rh[k];
      n[j] = std::tanh(a);
      out[j] = (1 - z[j]) * hp[j] + z[j] * n[j];
    }
    if (r_out) *r_out = r, *z_out = z, *n_out = n;
    return out;
  }
  Vec combined(const Vec& hv) const {
    Vec c(hv);
    Vec logits(S);
    double top = -1e300;
    for (int i = 0; i < S; ++i) logits[i] = hv[i * H / S], top = std::max(top, logits[i]);
    double sum = 0;
    for (int i = 0; i < S; ++i) sum += std::exp(logits[i] - top);
    for (int i = 0; i < S; ++i) c.push_back(std::exp(logits[i] - top) / sum);
    return c;
  }
  double decode(const Vec& c) const {
    double a = 0;
    for (int i = 0; i < H + S; ++i) a += head[i] * c[i];
    return std::max(std::exp(std::min(10.0, std::max(-10.0, a))), 1e-6);
  }
  std::vector<Vec> rollout(const Vec& x0, int steps) const {
    std::vector<Vec> out(E);
    for (int m = 0; m < E; ++m) {
      Vec x = x0, hv = h[m];
      for (int t = 0; t < steps; ++t) {
        hv = gru(m, hv, x);
        const double l = decode(combined(hv));
        out[m].push_back(l);
        x[0] = l;
      }
    }
    return out;
  }
  // The prototype's train_step with K = 1.
  void train(const Vec& x, double y, double lr, double clip) {
    std::vector<Vec> hp(E), r(E), z(E), n(E), c(E), dh(E, Vec(H));
    for (int m = 0; m < E; ++m) {
      hp[m] = h[m];
      h[m] = gru(m, hp[m], x, &r[m], &z[m], &n[m]);
      c[m] = combined(h[m]);
    }
    for (int m = 0; m < E; ++m) {
      const double l = decode(c[m]);
      const double g = (l - y) * l;
      for (int i = 0; i < H + S; ++i) head[i] -= lr * g * c[m][i];
      for (int i = 0; i < H; ++i) dh[m][i] = g * head[i];
    }
    for (int m = 0; m < E; ++m) {
      Vec gW(W[m].size(), 0.0), gU(U[m].size(), 0.0), gb(b[m].size(), 0.0);
      Vec dz(H), dan(H), daz(H), dar(H), drh(H, 0.0);
      for (int j = 0; j < H; ++j) {
        dz[j] = dh[m][j] * (n[m][j] - hp[m][j]);
        dan[j] = dh[m][j] * z[m][j] * (1 - n[m][j] * n[m][j]);
        daz[j] = dz[j] * z[m][j] * (1 - z[m][j]);
      }
      for (int j = 0; j < H; ++j)
        for (int k = 0; k < H; ++k) drh[k] += U[m][(2 * H + j) * H + k] * dan[j];
      for (int k = 0; k < H; ++k) dar[k] = drh[k] * hp[m][k] * r[m][k] * (1 - r[m][k]);
      const Vec* da[3] = {&dar, &daz, &dan};
      for (int gte = 0; gte < 3; ++gte)
        for (int j = 0; j < H; ++j) {
          const int q = gte * H + j;
          const double d = (*da[gte])[j];
          gb[q] = d;
          for (int k = 0; k < I; ++k) gW[q * I + k] = d * x[k];
          for (int k = 0; k < H; ++k)
            gU[q * H + k] = d * (gte == 2 ? r[m][k] * hp[m][k] : hp[m][k]);
        }
      double sq = 0;
      for (double v : gW) sq += v * v;
      for (double v : gU) sq += v * v;
      for (double v : gb) sq += v * v;
      const double norm = std::sqrt(sq);
      const double step = lr * (norm > clip ? clip / norm : 1.0);
      for (std::size_t i = 0; i < gW.size(); ++i) W[m][i] -= step * gW[i];
      for (std::size_t i = 0; i < gU.size(); ++i) U[m][i] -= step * gU[i];
      for (std::size_t i = 0; i < gb.size(); ++i) b[m][i] -= step * gb[i];
    }
  }
};

using hpt::test::download_flat;
using hpt::test::upload_flat;

// Random parameters of a small ensemble on the device and the same values on the host (rounded to
// Real first, so both start from identical numbers).
template <class Real, class Mem>
HostRssm make_pair(hpt::PrototypeRssmParams<Real, Mem>& p, hpt::View2<Real, Mem>& latents,
                   double scale) {
  const int E = p.members(), H = p.hidden(), I = p.input(), S = p.stochastic;
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-scale, scale);
  auto rounded = [&](std::size_t n) {
    Vec v(n);
    for (auto& e : v) e = double(Real(u(gen)));
    return v;
  };
  HostRssm h{E, H, S, I, {}, {}, {}, {}, {}};
  Vec w_ih, w_hh, b_ih, lat;
  for (int m = 0; m < E; ++m) {
    h.W.push_back(rounded(std::size_t(3 * H * I)));
    h.U.push_back(rounded(std::size_t(3 * H * H)));
    h.b.push_back(rounded(std::size_t(3 * H)));
    h.h.push_back(rounded(std::size_t(H)));
    w_ih.insert(w_ih.end(), h.W[m].begin(), h.W[m].end());
    w_hh.insert(w_hh.end(), h.U[m].begin(), h.U[m].end());
    b_ih.insert(b_ih.end(), h.b[m].begin(), h.b[m].end());
    lat.insert(lat.end(), h.h[m].begin(), h.h[m].end());
  }
  h.head = rounded(std::size_t(H + S));
  for (auto& v : h.head) v = double(Real(v * 3.0));
  upload_flat(p.gru.w_ih, w_ih);
  upload_flat(p.gru.w_hh, w_hh);
  upload_flat(p.gru.b_ih, b_ih);
  Kokkos::deep_copy(p.gru.b_hh, Real(0));
  upload_flat(p.head, h.head);
  upload_flat(latents, lat);
  return h;
}

template <class C>
class RssmPrototypeKernels : public ::testing::Test {};
TYPED_TEST_SUITE(RssmPrototypeKernels, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RssmPrototypeKernels, RolloutMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 3, H = 24, S = 5, I = 7, Y = 6;  // H / S not whole: the strided pick floors
  hpt::PrototypeRssmParams<Real, Mem> p(E, H, S, I);
  hpt::View2<Real, Mem> latents("lat", E, H);
  const HostRssm host = make_pair(p, latents, 0.4);
  Vec x0(I);
  for (int k = 0; k < I; ++k) x0[k] = double(Real(0.3 * std::sin(1.0 + k)));
  hpt::View1<Real, Mem> x("x", I);
  hpt::test::upload_values(x, x0);
  hpt::View2<Real, Mem> traj("traj", E, Y);
  hpt::prototype_rssm_rollout(Space(), p, latents, x, Y, traj);
  const auto ref = host.rollout(x0, Y);
  const Vec got = download_flat(traj);
  for (int m = 0; m < E; ++m)
    for (int t = 0; t < Y; ++t)
      EXPECT_TRUE(hpt::test::near_rel(got[std::size_t(m * Y + t)], ref[m][t],
                                      40 * hpt::test::tolerance<Real>(H)))
          << "member " << m << " step " << t;
}

TYPED_TEST(RssmPrototypeKernels, TrainStepMatchesHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 3, H = 16, S = 4, I = 6;
  // clip 1e9: no clipping; clip 0.05: every member clipped.
  for (const double clip : {1e9, 0.05}) {
    hpt::PrototypeRssmParams<Real, Mem> p(E, H, S, I);
    hpt::View2<Real, Mem> latents("lat", E, H);
    HostRssm host = make_pair(p, latents, 0.5);
    hpt::PrototypeRssmWork<Real, Mem> work(E, H, S, I);
    Vec x0(I);
    for (int k = 0; k < I; ++k) x0[k] = double(Real(0.5 * std::cos(2.0 + k)));
    hpt::View1<Real, Mem> x("x", I);
    hpt::test::upload_values(x, x0);
    const double y = 0.2, lr = 0.05;
    for (int rep = 0; rep < 2; ++rep) {  // two steps: the second starts from trained weights
      // Each member's one-step forecast before the step's updates (a one-step host rollout).
      const auto before = host.rollout(x0, 1);
      hpt::prototype_rssm_train_step(Space(), p, latents, x, Real(y), Real(lr), Real(clip), work);
      host.train(x0, y, lr, clip);
      const Vec predicted = download_flat(work.predicted);
      for (int m = 0; m < E; ++m)
        EXPECT_TRUE(hpt::test::near_rel(predicted[std::size_t(m)], before[m][0],
                                        40 * hpt::test::tolerance<Real>(H)))
            << "member " << m << " step " << rep;
    }
    const double tol = 200 * hpt::test::tolerance<Real>(H);
    auto expect_all = [&](const Vec& got, const Vec& ref, const char* what) {
      ASSERT_EQ(got.size(), ref.size()) << what;
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(hpt::test::near_rel(got[i], ref[i], tol))
            << what << " " << i << " clip " << clip;
    };
    Vec W, U, b, lat;
    for (int m = 0; m < E; ++m) {
      W.insert(W.end(), host.W[m].begin(), host.W[m].end());
      U.insert(U.end(), host.U[m].begin(), host.U[m].end());
      b.insert(b.end(), host.b[m].begin(), host.b[m].end());
      lat.insert(lat.end(), host.h[m].begin(), host.h[m].end());
    }
    expect_all(download_flat(p.gru.w_ih), W, "W");
    expect_all(download_flat(p.gru.w_hh), U, "U");
    expect_all(download_flat(p.gru.b_ih), b, "b");
    expect_all(download_flat(p.head), host.head, "head");
    expect_all(download_flat(latents), lat, "latents");
    for (double v : download_flat(p.gru.b_hh)) EXPECT_EQ(v, 0.0);  // one bias per gate
  }
}

TEST(RssmPrototype, FreshStateWithNanFeaturesHasConfidence078) {
  hpt::PrototypeRssmOptions o;  // the prototype's sizes
  hpt::PrototypeRssm rssm(o);
  hpt::View1<hpt::real> x("x", std::size_t(o.input));
  Kokkos::deep_copy(x, std::numeric_limits<hpt::real>::quiet_NaN());
  const Vec paths = rssm.member_paths(x, 10);
  for (double v : paths) EXPECT_EQ(v, hpt::real(1e-6));  // a NaN logit decodes to the floor
  hpt::LossEmas fresh;
  EXPECT_NEAR(rssm.confidence(x, fresh), 0.78, 1e-12);  // 0.4 * 1 + 0.4 * 0.7 + 0.2 * 0.5
}

TEST(RssmPrototype, ConfidenceTermsFollowErrorsAndEmas) {
  hpt::PrototypeRssmOptions o;
  o.members = 2, o.hidden = 16, o.stochastic = 4;
  hpt::PrototypeRssm rssm(o);
  hpt::View1<hpt::real> x("x", std::size_t(o.input));
  Kokkos::deep_copy(x, hpt::real(0.1));
  // Independent pieces: the agreement term from the members' own 10-step paths.
  const Vec paths = rssm.member_paths(x, 10);
  const double mean = 0.5 * (paths[9] + paths[19]);
  const double sd = std::sqrt(
      0.5 * ((paths[9] - mean) * (paths[9] - mean) + (paths[19] - mean) * (paths[19] - mean)));
  const double agreement = 1.0 / (1.0 + sd * (1.0 + 0.1 * std::sqrt(10.0)));
  hpt::LossEmas emas;
  for (double l : {2.0, 1.0, 1.0, 1.0}) emas.update(l);
  // fast = 0.75^3 * 2 + (1 - 0.75^3), slow likewise with 0.984375.
  const double fast = std::pow(0.75, 3) * 2 + (1 - std::pow(0.75, 3));
  const double slow = std::pow(0.984375, 3) * 2 + (1 - std::pow(0.984375, 3));
  EXPECT_NEAR(emas.fast, fast, 1e-12);
  EXPECT_NEAR(emas.slow, slow, 1e-12);
  const double stability = std::max(0.5, 1.0 / (1.0 + 2.0 * std::fabs(fast - slow) / slow));
  EXPECT_NEAR(rssm.confidence(x, emas), 0.4 * agreement + 0.4 * 0.7 + 0.2 * stability, 1e-6);
  // Ten observations: the history term becomes 1 / (1 + mean error), the errors being the
  // distance between the one-step forecast (before each training step) and the state's loss.
  double sum = 0;
  for (int i = 0; i < 10; ++i) {
    const double predicted = rssm.forecast(x, 1).mean_path[0];
    sum += std::fabs(predicted - 0.5);
    rssm.observe(x, 0.5, 0.4);
  }
  EXPECT_EQ(rssm.errors_recorded(), 10);
  const Vec after = rssm.member_paths(x, 10);
  const double m2 = 0.5 * (after[9] + after[19]);
  const double sd2 =
      std::sqrt(0.5 * ((after[9] - m2) * (after[9] - m2) + (after[19] - m2) * (after[19] - m2)));
  const double expected = 0.4 / (1.0 + sd2 * (1.0 + 0.1 * std::sqrt(10.0))) +
                          0.4 * std::min(0.99, 1.0 / (1.0 + sum / 10.0)) + 0.2 * stability;
  EXPECT_NEAR(rssm.confidence(x, emas), expected, 1e-6);
}

}  // namespace
