// gru_step (docs/method.md#gru-cell) against a plain host GRU in double written here, for both
// reset conventions, many sizes, every backend and both precisions; plus properties of the gates.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/gru_step.hpp"
#include "test_support.hpp"

namespace {

using hpt::GruReset;

template <class T>
class GruStep : public ::testing::Test {};
TYPED_TEST_SUITE(GruStep, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Host copies (as double) of one problem: weights, biases, x (B,E,I), h (B,E,H).
struct HostProblem {
  int B, E, H, I;
  std::vector<double> w_ih, w_hh, b_ih, b_hh, x, h;
  double wih(int m, int row, int k) const { return w_ih[(size_t(m) * 3 * H + row) * I + k]; }
  double whh(int m, int row, int k) const { return w_hh[(size_t(m) * 3 * H + row) * H + k]; }
  double bih(int m, int row) const { return b_ih[size_t(m) * 3 * H + row]; }
  double bhh(int m, int row) const { return b_hh[size_t(m) * 3 * H + row]; }
  double xv(int b, int m, int k) const { return x[(size_t(b) * E + m) * I + k]; }
  double hv(int b, int m, int j) const { return h[(size_t(b) * E + m) * H + j]; }
};

double host_sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// The GRU of docs/method.md#gru-cell in double, unit by unit, gate rows r = [0,H), z = [H,2H), n =
// [2H,3H).
std::vector<double> reference_step(const HostProblem& p, GruReset reset) {
  const int H = p.H, I = p.I;
  std::vector<double> out(size_t(p.B) * p.E * H);
  for (int b = 0; b < p.B; ++b)
    for (int m = 0; m < p.E; ++m) {
      std::vector<double> r(H), wx(3 * H), uh(3 * H);
      for (int row = 0; row < 3 * H; ++row) {
        double a = 0, c = 0;
        for (int k = 0; k < I; ++k) a += p.wih(m, row, k) * p.xv(b, m, k);
        for (int k = 0; k < H; ++k) c += p.whh(m, row, k) * p.hv(b, m, k);
        wx[row] = a;
        uh[row] = c;
      }
      for (int j = 0; j < H; ++j) r[j] = host_sigmoid(wx[j] + p.bih(m, j) + uh[j] + p.bhh(m, j));
      for (int j = 0; j < H; ++j) {
        const double z = host_sigmoid(wx[H + j] + p.bih(m, H + j) + uh[H + j] + p.bhh(m, H + j));
        const double hj = p.hv(b, m, j);
        double& o = out[(size_t(b) * p.E + m) * H + j];
        if (reset == GruReset::After) {  // PyTorch's nn.GRUCell
          const double n = std::tanh(wx[2 * H + j] + p.bih(m, 2 * H + j) +
                                     r[j] * (uh[2 * H + j] + p.bhh(m, 2 * H + j)));
          o = (1.0 - z) * n + z * hj;
        } else {  // the prototype
          double urh = 0;
          for (int k = 0; k < H; ++k) urh += p.whh(m, 2 * H + j, k) * r[k] * p.hv(b, m, k);
          const double n =
              std::tanh(wx[2 * H + j] + urh + p.bih(m, 2 * H + j) + p.bhh(m, 2 * H + j));
          o = (1.0 - z) * hj + z * n;
        }
      }
    }
  return out;
}

// Device problem of given sizes filled with seeded uniform values; the host copy holds exactly the
// values stored in precision Real.
template <class Space, class Real>
struct DeviceProblem {
  using Mem = typename Space::memory_space;
  hpt::GruWeights<Real, Mem> w;
  hpt::View3<Real, Mem> x, h, h_out;
  HostProblem host;

  DeviceProblem(int B, int E, int H, int I, unsigned seed)
      : w(E, H, I), x("x", B, E, I), h("h", B, E, H), h_out("h_out", B, E, H) {
    host = HostProblem{B, E, H, I, {}, {}, {}, {}, {}, {}};
    std::mt19937 gen(seed);
    const double scale = 1.0 / std::sqrt(double(H));
    fill(w.w_ih, host.w_ih, gen, scale);
    fill(w.w_hh, host.w_hh, gen, scale);
    fill(w.b_ih, host.b_ih, gen, 0.5);
    fill(w.b_hh, host.b_hh, gen, 0.5);
    fill(x, host.x, gen, 1.0);
    fill(h, host.h, gen, 1.0);
  }

  template <class View>
  static void fill(const View& v, std::vector<double>& copy, std::mt19937& gen, double scale) {
    std::uniform_real_distribution<double> dist(-scale, scale);
    auto mirror = Kokkos::create_mirror_view(v);
    Real* data = mirror.data();
    copy.resize(mirror.span());
    for (size_t i = 0; i < mirror.span(); ++i) {
      data[i] = Real(dist(gen));
      copy[i] = double(data[i]);
    }
    Kokkos::deep_copy(v, mirror);
  }

  // Re-uploads host values (after a test changed them).
  void upload_biases() {
    upload(w.b_ih, host.b_ih);
    upload(w.b_hh, host.b_hh);
  }
  void upload_weights() {
    upload(w.w_ih, host.w_ih);
    upload(w.w_hh, host.w_hh);
  }

  template <class View>
  static void upload(const View& v, const std::vector<double>& values) {
    auto mirror = Kokkos::create_mirror_view(v);
    for (size_t i = 0; i < mirror.span(); ++i) mirror.data()[i] = Real(values[i]);
    Kokkos::deep_copy(v, mirror);
  }

  std::vector<double> run(GruReset reset) {
    hpt::gru_step(Space(), w, reset, x, h, h_out);
    Space().fence();
    return download(h_out);
  }

  static std::vector<double> download(const hpt::View3<Real, Mem>& v) {
    auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    std::vector<double> out(mirror.span());
    for (size_t i = 0; i < mirror.span(); ++i) out[i] = double(mirror.data()[i]);
    return out;
  }
};

struct Sizes {
  int H, I, B, E;
};

// Every H of the brief, each with I in {1, 64}, B in {1, 3}, E in {1, 3} covered across the list.
const std::vector<Sizes> kSizes = {{1, 1, 1, 1},    {1, 64, 3, 3},    {7, 1, 3, 1},
                                   {7, 64, 1, 3},   {64, 64, 3, 3},   {64, 1, 1, 1},
                                   {256, 64, 3, 3}, {256, 1, 1, 3},   {1000, 64, 3, 1},
                                   {1000, 1, 1, 3}, {2048, 64, 1, 1}, {2048, 1, 3, 1}};

TYPED_TEST(GruStep, MatchesHostReferenceBothResets) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  unsigned seed = 11;
  for (const auto& s : kSizes) {
    DeviceProblem<Space, Real> problem(s.B, s.E, s.H, s.I, seed++);
    for (const auto reset : {GruReset::After, GruReset::Before}) {
      const auto got = problem.run(reset);
      const auto want = reference_step(problem.host, reset);
      const double tol = hpt::test::tolerance<Real>(s.H + s.I);
      int bad = 0;
      for (size_t i = 0; i < want.size() && bad < 5; ++i) {
        const auto ok = hpt::test::near_rel(got[i], want[i], tol);
        if (!ok) ++bad;
        EXPECT_TRUE(ok) << "H=" << s.H << " I=" << s.I << " B=" << s.B << " E=" << s.E
                        << " reset=" << int(reset) << " element " << i;
      }
    }
  }
}

// All weights and biases zero: z = 1/2 and n = 0, so h' = h / 2 exactly.
TYPED_TEST(GruStep, ZeroWeightsHalveTheState) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  DeviceProblem<Space, Real> problem(3, 2, 37, 5, 3);
  Kokkos::deep_copy(problem.w.w_ih, Real(0));
  Kokkos::deep_copy(problem.w.w_hh, Real(0));
  Kokkos::deep_copy(problem.w.b_ih, Real(0));
  Kokkos::deep_copy(problem.w.b_hh, Real(0));
  for (const auto reset : {GruReset::After, GruReset::Before}) {
    const auto got = problem.run(reset);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 0.5 * problem.host.h[i]) << i;
  }
}

// The update gate saturated on the side that keeps the state passes it through unchanged: z ~ 1
// (b_iz = +40) with `after` (PyTorch, h' = (1 - z) n + z h), z ~ 0 (b_iz = -40) with `before`
// (h' = (1 - z) h + z n).
TYPED_TEST(GruStep, KeepingUpdateGatePassesTheState) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  DeviceProblem<Space, Real> problem(2, 3, 19, 8, 5);
  const int H = 19;
  for (const auto reset : {GruReset::After, GruReset::Before}) {
    for (int m = 0; m < 3; ++m)
      for (int j = 0; j < H; ++j)
        problem.host.b_ih[size_t(m) * 3 * H + H + j] = reset == GruReset::After ? 40.0 : -40.0;
    problem.upload_biases();
    const auto got = problem.run(reset);
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(hpt::test::near_rel(got[i], problem.host.h[i], hpt::test::tolerance<Real>()))
          << i;
  }
}

// Update gate on the candidate's side (z ~ 0 with `after`, z ~ 1 with `before`) and reset gate
// closed (r ~ 0): h' = n, where `after` drops the whole recurrent term (n = tanh(W_n x + b_in)) but
// `before` keeps b_hn (n = tanh(W_n x + b_in + b_hn)).
TYPED_TEST(GruStep, ClosedResetGateDistinguishesConventions) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const int B = 2, E = 2, H = 23, I = 9;
  DeviceProblem<Space, Real> problem(B, E, H, I, 7);
  const auto& p = problem.host;
  for (const auto reset : {GruReset::After, GruReset::Before}) {
    for (int m = 0; m < E; ++m)
      for (int j = 0; j < H; ++j) {
        problem.host.b_ih[size_t(m) * 3 * H + j] = -40.0;  // r -> 0
        problem.host.b_ih[size_t(m) * 3 * H + H + j] = reset == GruReset::After ? -40.0 : 40.0;
      }
    problem.upload_biases();
    const auto got = problem.run(reset);
    for (int b = 0; b < B; ++b)
      for (int m = 0; m < E; ++m)
        for (int j = 0; j < H; ++j) {
          double pre = p.bih(m, 2 * H + j);
          for (int k = 0; k < I; ++k) pre += p.wih(m, 2 * H + j, k) * p.xv(b, m, k);
          if (reset == GruReset::Before) pre += p.bhh(m, 2 * H + j);
          EXPECT_TRUE(hpt::test::near_rel(got[(size_t(b) * E + m) * H + j], std::tanh(pre),
                                          hpt::test::tolerance<Real>(I)))
              << "reset=" << int(reset) << " b=" << b << " m=" << m << " j=" << j;
        }
  }
}

// Reset gate open (r = 1): both conventions compute n = tanh(W_n x + b_in + U_n h + b_hn); with the
// update gate at z = 1/2 (its weights and biases zero) both blend h' = (n + h) / 2.
TYPED_TEST(GruStep, OpenResetGateMakesConventionsAgree) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  const int H = 41, I = 16;
  DeviceProblem<Space, Real> problem(3, 2, H, I, 9);
  auto& p = problem.host;
  for (int m = 0; m < 2; ++m)
    for (int j = 0; j < H; ++j) {
      p.b_ih[size_t(m) * 3 * H + j] = 60.0;                                         // r -> 1
      p.b_ih[size_t(m) * 3 * H + H + j] = p.b_hh[size_t(m) * 3 * H + H + j] = 0.0;  // z = 1/2
      for (int k = 0; k < I; ++k) p.w_ih[(size_t(m) * 3 * H + H + j) * I + k] = 0.0;
      for (int k = 0; k < H; ++k) p.w_hh[(size_t(m) * 3 * H + H + j) * H + k] = 0.0;
    }
  problem.upload_biases();
  problem.upload_weights();
  const auto after = problem.run(GruReset::After);
  const auto before = problem.run(GruReset::Before);
  for (size_t i = 0; i < after.size(); ++i)
    EXPECT_TRUE(hpt::test::near_rel(after[i], before[i], hpt::test::tolerance<Real>(H + 16))) << i;
}

// Every (row, member) is independent: a row computed inside a batch of 3 rows equals the same row
// computed alone, bit for bit (catches mixed-up rows, members or unit blocks).
TYPED_TEST(GruStep, RowsAreComputedIndependently) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  using Problem = DeviceProblem<Space, Real>;
  const int B = 3, E = 3, H = 150, I = 12;
  Problem problem(B, E, H, I, 13);
  for (const auto reset : {GruReset::After, GruReset::Before}) {
    const auto batch = problem.run(reset);
    for (int b = 0; b < B; ++b) {
      const auto x_row =
          Kokkos::subview(problem.x, std::make_pair(b, b + 1), Kokkos::ALL(), Kokkos::ALL());
      const auto h_row =
          Kokkos::subview(problem.h, std::make_pair(b, b + 1), Kokkos::ALL(), Kokkos::ALL());
      hpt::View3<Real, Mem> x1("x1", 1, E, I), h1("h1", 1, E, H), out1("out1", 1, E, H);
      Kokkos::deep_copy(x1, x_row);
      Kokkos::deep_copy(h1, h_row);
      hpt::gru_step(Space(), problem.w, reset, x1, h1, out1);
      Space().fence();
      const auto single = Problem::download(out1);
      for (size_t i = 0; i < single.size(); ++i)
        EXPECT_EQ(single[i], batch[size_t(b) * E * H + i]) << "row " << b << " element " << i;
    }
  }
}

}  // namespace
