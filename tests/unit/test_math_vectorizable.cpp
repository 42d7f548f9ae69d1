// core/math_vectorizable.hpp against the C library in double, computed in a kernel on every
// backend: over a dense grid that covers the clamped ends, zero's neighbourhood and the switch of
// tanh's two forms, exp within 2.5 ulp (float) on [-87, 88], sigmoid and tanh within 2e-7 absolute
// and tanh's sign kept, a double argument giving the library's value; log over the whole exponent
// range, log1p on [0, 1] and softplus within 2 ulp, cos(2 pi t) within 2e-16 of long double; the
// exact 53-bit integer conversion at the edges of its halves.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <limits>

#include "core/math_vectorizable.hpp"
#include "core/types.hpp"
#include "test_support.hpp"

namespace {

template <class T>
class MathVectorizable : public ::testing::Test {};
TYPED_TEST_SUITE(MathVectorizable, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

constexpr int kPoints = 400001;
constexpr double kLow = -95.0, kHigh = 95.0;

// x_i on [kLow, kHigh], denser near zero (x = sign(u) u^2 scale).
double grid_point(int i) {
  const double u = -1.0 + 2.0 * i / (kPoints - 1);
  return (u < 0 ? -1.0 : 1.0) * u * u * kHigh;
}

// exp, sigmoid and tanh of every x in a kernel on Space (a free function: nvcc refuses a device
// lambda in a test's body).
template <class Space, class Real, class Mem>
void gate_functions(const hpt::View1<Real, Mem>& x, const hpt::View1<Real, Mem>& e,
                    const hpt::View1<Real, Mem>& s, const hpt::View1<Real, Mem>& t) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(x.extent(0))), KOKKOS_LAMBDA(const int i) {
        e(i) = hpt::math::exp_vectorizable(x(i));
        s(i) = hpt::math::sigmoid_vectorizable(x(i));
        t(i) = hpt::math::tanh_vectorizable(x(i));
      });
}

TYPED_TEST(MathVectorizable, MatchesLibraryInDouble) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::View1<Real, Mem> x("x", kPoints), e("e", kPoints), s("s", kPoints), t("t", kPoints);
  auto xh = Kokkos::create_mirror_view(x);
  for (int i = 0; i < kPoints; ++i) xh(i) = Real(grid_point(i));
  Kokkos::deep_copy(x, xh);
  gate_functions<Space>(x, e, s, t);
  const auto eh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e);
  const auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  const auto th = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
  const double ulp = std::numeric_limits<Real>::epsilon();
  const bool single = sizeof(Real) == 4;
  double worst_exp = 0, worst_sigmoid = 0, worst_tanh = 0;
  for (int i = 0; i < kPoints; ++i) {
    const double v = double(xh(i));
    if (v > -87.0 && v < 88.0 && (single || std::fabs(v) < 700.0))
      worst_exp = std::fmax(worst_exp, std::fabs(eh(i) - std::exp(v)) / std::exp(v));
    worst_sigmoid = std::fmax(worst_sigmoid, std::fabs(sh(i) - 1.0 / (1.0 + std::exp(-v))));
    worst_tanh = std::fmax(worst_tanh, std::fabs(th(i) - std::tanh(v)));
    if (v != 0.0) {
      ASSERT_EQ(th(i) < 0, v < 0) << "tanh's sign at " << v;
    }
    ASSERT_GE(sh(i), 0.0) << v;
    ASSERT_LE(sh(i), 1.0) << v;
  }
  EXPECT_LE(worst_exp, 2.5 * ulp);
  EXPECT_LE(worst_sigmoid, single ? 2e-7 : 4 * ulp);
  EXPECT_LE(worst_tanh, single ? 2e-7 : 4 * ulp);
}

// Below the clamp exp gives the smallest value it can (never 0, never a NaN); above it a finite
// one.
TEST(MathVectorizableHost, ClampedEnds) {
  EXPECT_GT(hpt::math::exp_vectorizable(-200.0f), 0.0f);
  EXPECT_LT(hpt::math::exp_vectorizable(-200.0f), 2e-38f);
  EXPECT_TRUE(std::isfinite(hpt::math::exp_vectorizable(200.0f)));
  EXPECT_EQ(hpt::math::sigmoid_vectorizable(-200.0f) >= 0.0f, true);
  EXPECT_EQ(hpt::math::tanh_vectorizable(200.0f), 1.0f);
  EXPECT_EQ(hpt::math::tanh_vectorizable(-200.0f), -1.0f);
}

}  // namespace

namespace {

// log, log1p and softplus of each of their inputs and cos(2 pi u), in a kernel on Space.
template <class Space, class Real, class Mem>
void log_functions(const hpt::View2<Real, Mem>& in, const hpt::View1<double, Mem>& u,
                   const hpt::View2<Real, Mem>& got, const hpt::View1<double, Mem>& cs) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Space>(0, int(u.extent(0))), KOKKOS_LAMBDA(const int i) {
        got(0, i) = hpt::math::log_vectorizable(in(0, i));
        got(1, i) = hpt::math::log1p_vectorizable(in(1, i));
        got(2, i) = hpt::math::softplus_vectorizable(in(2, i));
        cs(i) = hpt::math::cos_2pi_vectorizable(u(i));
      });
}

// log, log1p and softplus in the test's precision and cos_2pi in double, computed in a kernel on
// every backend, against the C library in double (long double for cos(2 pi t), whose library form
// rounds 2 pi t first): log within 2 ulp of the result over the whole exponent range, log1p on
// [0, 1] and softplus on [-80, 80] within 2 ulp of their size plus one of 1, cos within 2e-16.
TYPED_TEST(MathVectorizable, LogSoftplusAndCosMatchLibrary) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  constexpr int n = 200001;
  const double big_exp = sizeof(Real) == 4 ? 36.0 : 300.0;  // log10 of the extremes of x
  hpt::View2<Real, Mem> in("in", 3, n), got("got", 3, n);
  hpt::View1<double, Mem> u("u", n), cs("cos", n);
  auto inh = Kokkos::create_mirror_view(in);
  auto uh = Kokkos::create_mirror_view(u);
  for (int i = 0; i < n; ++i) {  // inputs made on the host, so every backend gets the same ones
    uh(i) = double(i) / (n - 1);
    inh(0, i) = Real(std::pow(10.0, big_exp * (2.0 * uh(i) - 1.0)));
    inh(1, i) = Real(uh(i));
    inh(2, i) = Real(160.0 * uh(i) - 80.0);
  }
  Kokkos::deep_copy(in, inh);
  Kokkos::deep_copy(u, uh);
  log_functions<Space>(in, u, got, cs);
  const auto goth = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
  const auto csh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cs);
  const double eps = std::numeric_limits<Real>::epsilon();
  double worst_log = 0, worst_log1p = 0, worst_softplus = 0, worst_cos = 0;
  for (int i = 0; i < n; ++i) {
    const double x = inh(0, i), xu = inh(1, i), xs = inh(2, i);
    const double want_log = std::log(x);
    worst_log = std::fmax(
        worst_log, std::fabs(goth(0, i) - want_log) / std::fmax(std::fabs(want_log), 1e-300));
    worst_log1p =
        std::fmax(worst_log1p, std::fabs(goth(1, i) - std::log1p(xu)) / (std::log1p(xu) + eps));
    const double want_sp = xs > 0 ? xs + std::log1p(std::exp(-xs)) : std::log1p(std::exp(xs));
    worst_softplus = std::fmax(worst_softplus, std::fabs(goth(2, i) - want_sp) / (want_sp + 1.0));
    const long double two_pi = 6.283185307179586476925286766559L;
    worst_cos = std::fmax(worst_cos, double(std::fabs(csh(i) - std::cos(two_pi * uh(i)))));
  }
  EXPECT_LE(worst_log, 2 * eps);
  EXPECT_LE(worst_log1p, 2 * eps);
  EXPECT_LE(worst_softplus, 2 * eps);
  EXPECT_LE(worst_cos, 2e-16);
}

// The exact conversion of a 53-bit integer equals the compiler's, at the edges of its two halves.
TEST(MathVectorizableHost, Uint53ConvertsExactly) {
  for (const std::uint64_t v : {0ULL, 1ULL, 0x1FFFFFULL, 0x200000ULL, 0x200001ULL, 1ULL << 52,
                                (1ULL << 53) - 1, 0x123456789ABCDULL})
    EXPECT_EQ(hpt::math::uint53_to_double(v), double(v)) << v;
}

}  // namespace
