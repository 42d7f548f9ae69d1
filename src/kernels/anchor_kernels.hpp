#pragma once
// Kernels of update style `dmd` over a ring of parameter anchors stored as one flat buffer
// (anchor s at [s P, (s + 1) P)): the Gram matrix of the displacements between consecutive
// anchors, in one pass, and a linear combination of the anchors added to a base buffer.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/register_reduce.hpp"
#include "kernels/sum_array.hpp"

namespace hpt {

constexpr int kMaxAnchors = 9;
constexpr int kMaxDisplacementPairs = (kMaxAnchors - 1) * kMaxAnchors / 2;

// Anchors in time order (oldest first): their slots in the ring, and a coefficient each.
struct AnchorTerms {
  int count = 0;
  int slot[kMaxAnchors] = {};
  double coef[kMaxAnchors] = {};
};

// gram (m x m, m = count - 1, row-major) of y_i = a_i+1 - a_i, differences taken in double.
template <class Space, class Real>
HPT_LAUNCHER std::vector<double> displacement_gram(
    const Space& space, View1<const Real, typename Space::memory_space> anchors, std::int64_t n,
    const AnchorTerms& order) {
  const int m = order.count - 1;
  HPT_REQUIRE(m >= 1 && order.count <= kMaxAnchors &&
                  std::int64_t(anchors.extent(0)) >= std::int64_t(order.count) * n,
              "displacement_gram: bad anchor count or buffer size");
  SumArray<kMaxDisplacementPairs> sums;
  const AnchorTerms o = order;
  reduce_in_registers(
      space, "hpt::displacement_gram", n,
      KOKKOS_LAMBDA(const std::int64_t p, SumArray<kMaxDisplacementPairs>& acc) {
        double y[kMaxAnchors - 1];
        for (int i = 0; i < m; ++i)
          y[i] = double(anchors(o.slot[i + 1] * n + p)) - double(anchors(o.slot[i] * n + p));
        int k = 0;
        for (int i = 0; i < m; ++i)
          for (int j = i; j < m; ++j) acc.v[k++] += y[i] * y[j];
      },
      Kokkos::Sum<SumArray<kMaxDisplacementPairs>>(sums));
  std::vector<double> gram(std::size_t(m * m));
  int k = 0;
  for (int i = 0; i < m; ++i)
    for (int j = i; j < m; ++j)
      gram[std::size_t(i * m + j)] = gram[std::size_t(j * m + i)] = sums.v[k++];
  return gram;
}

// out = base + sum_i coef_i anchor_i (out may be base).
template <class Space, class Real>
HPT_LAUNCHER void add_anchor_combination(const Space& space,
                                         View1<Real, typename Space::memory_space> out,
                                         View1<const Real, typename Space::memory_space> base,
                                         View1<const Real, typename Space::memory_space> anchors,
                                         const AnchorTerms& terms) {
  const std::int64_t n = std::int64_t(out.extent(0));
  HPT_REQUIRE(std::int64_t(base.extent(0)) == n && terms.count <= kMaxAnchors &&
                  std::int64_t(anchors.extent(0)) >= std::int64_t(terms.count) * n,
              "add_anchor_combination: buffer sizes do not agree");
  const AnchorTerms t = terms;
  Kokkos::parallel_for(
      "hpt::add_anchor_combination", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t p) {
        double s = double(base(p));
        for (int i = 0; i < t.count; ++i) s += t.coef[i] * double(anchors(t.slot[i] * n + p));
        out(p) = Real(s);
      });
}

// Every one of `count` anchors moves by theta - start.
template <class Space, class Real>
HPT_LAUNCHER void shift_anchors(const Space& space,
                                View1<Real, typename Space::memory_space> anchors,
                                View1<const Real, typename Space::memory_space> theta,
                                View1<const Real, typename Space::memory_space> start, int count) {
  const std::int64_t n = std::int64_t(theta.extent(0));
  HPT_REQUIRE(std::int64_t(start.extent(0)) == n &&
                  std::int64_t(anchors.extent(0)) >= std::int64_t(count) * n,
              "shift_anchors: buffer sizes do not agree");
  Kokkos::parallel_for(
      "hpt::shift_anchors", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(count) * n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t p = i % n;
        anchors(i) = Real(double(anchors(i)) + double(theta(p)) - double(start(p)));
      });
}

}  // namespace hpt
