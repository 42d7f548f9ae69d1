#pragma once
// Shared helpers for unit tests: the backends to run every kernel test on, and tolerances that
// scale with precision.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "typed_test_names.hpp"

namespace hpt::test {

namespace detail {
template <class... T>
struct List {};

// Concatenates Lists; `types` is the result as gtest's type list.
template <class... Lists>
struct Join;
template <class... T>
struct Join<List<T...>> {
  using type = List<T...>;
  using types = ::testing::Types<T...>;
};
template <class... A, class... B, class... Rest>
struct Join<List<A...>, List<B...>, Rest...> : Join<List<A..., B...>, Rest...> {};

// Each backend as a list of one, or of none where the Kokkos build leaves it out (Serial too:
// a build may enable OpenMP alone).
#if defined(KOKKOS_ENABLE_CUDA)
using CudaIfEnabled = List<Kokkos::Cuda>;
#else
using CudaIfEnabled = List<>;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
using OpenMPIfEnabled = List<Kokkos::OpenMP>;
#else
using OpenMPIfEnabled = List<>;
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
using SerialIfEnabled = List<Kokkos::Serial>;
#else
using SerialIfEnabled = List<>;
#endif
}  // namespace detail

// Every enabled backend; one test source runs on each (docs/architecture.md#tests).
using EnabledSpaces =
    detail::Join<detail::CudaIfEnabled, detail::OpenMPIfEnabled, detail::SerialIfEnabled>::type;
using Backends = detail::Join<EnabledSpaces>::types;

namespace detail {
// CaseOf<Space, Element> for one space and each element type.
template <template <class, class> class CaseOf, class Space, class... Elements>
using CasesOfSpace = List<CaseOf<Space, Elements>...>;
}  // namespace detail

// CaseOf<Space, Element> for every enabled space and each element type, space by space.
template <template <class, class> class CaseOf, class Spaces, class... Elements>
struct CasesOf;
template <template <class, class> class CaseOf, class... Spaces, class... Elements>
struct CasesOf<CaseOf, detail::List<Spaces...>, Elements...>
    : detail::Join<detail::List<>, detail::CasesOfSpace<CaseOf, Spaces, Elements...>...> {};

template <class Space, class Real>
struct Case {
  using space = Space;
  using real = Real;
};

// Backends × {float, double}.
using BackendsAndPrecisions = CasesOf<Case, EnabledSpaces, float, double>::types;

// The host space of reference runs that compare backends: Serial where the build has it.
#if defined(KOKKOS_ENABLE_SERIAL)
using HostReference = Kokkos::Serial;
#else
using HostReference = Kokkos::DefaultHostExecutionSpace;
#endif

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

// The reference data folder: HPT_TEST_DATA_DIR in the environment (a bundle on a GPU host carries
// tests/data elsewhere), else the source tree's tests/data known at build time.
inline std::string test_data_dir() {
  const char* dir = std::getenv("HPT_TEST_DATA_DIR");
  return dir && *dir ? std::string(dir) : std::string(HPT_TEST_DATA_DIR);
}

}  // namespace hpt::test
