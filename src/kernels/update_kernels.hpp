#pragma once
// Kernels of the update predictors over the flat parameter buffer (kernels/parameter_store.hpp):
// finite-difference extrapolation of parameter snapshots, linear combinations of buffers,
// per-tensor dot products, and a per-tensor scaled step along a direction.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "kernels/parameter_store.hpp"
#include "kernels/per_tensor.hpp"

namespace hpt {

// out = t0 + c1 * (t0 - t1) + c2 * (t0 - 2 t1 + t2): first and second backward differences of
// snapshots d steps apart (c2 = 0 needs no t2; pass t1 for it).
template <class Space, class Real>
HPT_LAUNCHER void extrapolate_differences(const Space& space,
                                          View1<Real, typename Space::memory_space> out,
                                          View1<const Real, typename Space::memory_space> t0,
                                          View1<const Real, typename Space::memory_space> t1,
                                          View1<const Real, typename Space::memory_space> t2,
                                          double c1, double c2) {
  const std::int64_t n = std::int64_t(out.extent(0));
  HPT_REQUIRE(std::int64_t(t0.extent(0)) == n && std::int64_t(t1.extent(0)) == n &&
                  std::int64_t(t2.extent(0)) == n,
              "extrapolate_differences: buffer sizes do not agree");
  Kokkos::parallel_for(
      "hpt::extrapolate_differences", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const double a = double(t0(i)), b = double(t1(i)), c = double(t2(i));
        out(i) = Real(a + c1 * (a - b) + c2 * (a - 2.0 * b + c));
      });
}

// out(t) = <a - b, u> over tensor t, for every tensor (one entry per tensor): with two snapshots
// for a and b, the projection of the update between them on u.
template <class Space, class Real>
HPT_LAUNCHER void tensor_dots(const Space& space, View1<const Real, typename Space::memory_space> a,
                              View1<const Real, typename Space::memory_space> b,
                              View1<const Real, typename Space::memory_space> u,
                              const ChunkTable<typename Space::memory_space>& chunks,
                              View1<double, typename Space::memory_space> out) {
  reduce_per_tensor(
      space, "hpt::tensor_dots", chunks, out,
      KOKKOS_LAMBDA(const std::int64_t k) { return (double(a(k)) - double(b(k))) * double(u(k)); });
}

// out(k) = base(k) + coef(t) * dir(k) for k in tensor t.
template <class Space, class Real>
HPT_LAUNCHER void step_along_per_tensor(const Space& space,
                                        View1<Real, typename Space::memory_space> out,
                                        View1<const Real, typename Space::memory_space> base,
                                        View1<const Real, typename Space::memory_space> dir,
                                        View1<const double, typename Space::memory_space> coef,
                                        const ChunkTable<typename Space::memory_space>& chunks) {
  for_each_element_per_tensor(
      space, "hpt::step_along_per_tensor", chunks,
      KOKKOS_LAMBDA(const int t, const std::int64_t k) {
        out(k) = Real(double(base(k)) + coef(t) * double(dir(k)));
      });
}

// ema = beta * ema + (1 - beta) * (a - b), element-wise (the EMA of real updates a - b).
template <class Space, class Real>
HPT_LAUNCHER void ema_of_difference(const Space& space,
                                    View1<Real, typename Space::memory_space> ema,
                                    View1<const Real, typename Space::memory_space> a,
                                    View1<const Real, typename Space::memory_space> b,
                                    double beta) {
  Kokkos::parallel_for(
      "hpt::ema_of_difference", Kokkos::RangePolicy<Space>(space, 0, ema.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) {
        ema(i) = Real(beta * double(ema(i)) + (1.0 - beta) * (double(a(i)) - double(b(i))));
      });
}

// out = a x + b y + c z, element-wise (out may be one of the inputs).
template <class Space, class Real>
HPT_LAUNCHER void linear_combination(const Space& space,
                                     View1<Real, typename Space::memory_space> out,
                                     View1<const Real, typename Space::memory_space> x, double a,
                                     View1<const Real, typename Space::memory_space> y, double b,
                                     View1<const Real, typename Space::memory_space> z, double c) {
  const std::int64_t n = std::int64_t(out.extent(0));
  HPT_REQUIRE(std::int64_t(x.extent(0)) == n && std::int64_t(y.extent(0)) == n &&
                  std::int64_t(z.extent(0)) == n,
              "linear_combination: buffer sizes do not agree");
  Kokkos::parallel_for(
      "hpt::linear_combination", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        out(i) = Real(a * double(x(i)) + b * double(y(i)) + c * double(z(i)));
      });
}

// out = s * in, element-wise.
template <class Space, class Real>
HPT_LAUNCHER void copy_scaled(const Space& space, View1<Real, typename Space::memory_space> out,
                              View1<const Real, typename Space::memory_space> in, double s) {
  Kokkos::parallel_for(
      "hpt::copy_scaled", Kokkos::RangePolicy<Space>(space, 0, out.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { out(i) = Real(double(in(i)) * s); });
}

}  // namespace hpt
