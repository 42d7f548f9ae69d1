#pragma once
// Shared helpers for unit tests: the backends to run every kernel test on, and tolerances that
// scale with precision.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "typed_test_names.hpp"

namespace hpt::test {

// Every enabled backend; one test source runs on each (docs/architecture.md#tests).
using Backends = ::testing::Types<
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::Cuda,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    Kokkos::OpenMP,
#endif
    Kokkos::Serial>;

template <class Space, class Real>
struct Case {
  using space = Space;
  using real = Real;
};

// Backends × {float, double}.
using BackendsAndPrecisions = ::testing::Types<
#if defined(KOKKOS_ENABLE_CUDA)
    Case<Kokkos::Cuda, float>, Case<Kokkos::Cuda, double>,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    Case<Kokkos::OpenMP, float>, Case<Kokkos::OpenMP, double>,
#endif
    Case<Kokkos::Serial, float>, Case<Kokkos::Serial, double>>;

// Relative tolerance for a computation of `terms` accumulated terms in precision Real.
template <class Real>
double tolerance(double terms = 1.0) {
  return 16.0 * std::numeric_limits<Real>::epsilon() * std::sqrt(terms + 1.0);
}

// |a - b| <= tol * max(1, |b|)
inline ::testing::AssertionResult near_rel(double a, double b, double tol) {
  if (std::isnan(a) && std::isnan(b)) return ::testing::AssertionSuccess();
  const double scale = std::fmax(1.0, std::fabs(b));
  if (std::fabs(a - b) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << a << " vs reference " << b << " (tol " << tol * scale << ")";
}

// Rank-1 View <-> host values (converted to the View's element type and back to double).
template <class View>
void upload_values(const View& v, const std::vector<double>& x) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < x.size(); ++i) h(i) = typename View::value_type(x[i]);
  Kokkos::deep_copy(v, h);
}
template <class View>
std::vector<double> download_values(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

// Any View's elements in memory order (row-major here) <-> host values.
template <class View>
std::vector<double> download_flat(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.span());
}
template <class View>
void upload_flat(const View& v, const std::vector<double>& x) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < x.size(); ++i) h.data()[i] = typename View::value_type(x[i]);
  Kokkos::deep_copy(v, h);
}

}  // namespace hpt::test
