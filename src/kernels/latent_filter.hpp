#pragma once
// Filtering the ensemble latents of R runs with their real features: one GRU step per run and
// member, h(r, m, :) <- GRU_m(h(r, m, :), x(r, :)), for the runs marked active; the latents of an
// inactive run (a replayed run that has ended) are left as they were.
#include <Kokkos_Core.hpp>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"

namespace hpt {

// Work space of filter_latents, allocated once by the caller.
template <class Real, class Mem = MemSpace>
struct LatentFilterWork {
  View3<Real, Mem> x;      // (R, E, I) the features of run r, repeated for every member
  View3<Real, Mem> h_new;  // (R, E, H)
  LatentFilterWork() = default;
  LatentFilterWork(int runs, int members, int hidden, int input)
      : x("hpt::filter_x", runs, members, input), h_new("hpt::filter_h", runs, members, hidden) {}
};

template <class Space, class Real>
HPT_LAUNCHER void filter_latents(const Space& space,
                                 const GruWeights<Real, typename Space::memory_space>& weights,
                                 const GruReset reset,
                                 const View2<Real, typename Space::memory_space>& features,
                                 const View1<int, typename Space::memory_space>& active,
                                 const View3<Real, typename Space::memory_space>& latents,
                                 const LatentFilterWork<Real, typename Space::memory_space>& work) {
  const int R = int(latents.extent(0));
  const int E = int(latents.extent(1));
  const int H = int(latents.extent(2));
  const int I = int(features.extent(1));
  HPT_REQUIRE(int(features.extent(0)) == R && int(active.extent(0)) == R,
              "filter_latents: features (R, I) and active (R) must match latents (R, E, H)");
  HPT_REQUIRE(int(work.x.extent(0)) == R && int(work.x.extent(1)) == E &&
                  int(work.x.extent(2)) == I && int(work.h_new.extent(0)) == R &&
                  int(work.h_new.extent(1)) == E && int(work.h_new.extent(2)) == H,
              "filter_latents: work space was built for other sizes");
  const auto x = work.x;
  const auto h_new = work.h_new;
  const auto f = features;
  const auto act = active;
  const auto h = latents;
  Kokkos::parallel_for(
      "hpt::filter_latents_input",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>(space, {0, 0, 0}, {R, E, I}),
      KOKKOS_LAMBDA(const int r, const int m, const int k) { x(r, m, k) = f(r, k); });
  gru_step(space, weights, reset, x, h, h_new);
  Kokkos::parallel_for(
      "hpt::filter_latents_commit",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>(space, {0, 0, 0}, {R, E, H}),
      KOKKOS_LAMBDA(const int r, const int m, const int j) {
        if (act(r) != 0) h(r, m, j) = h_new(r, m, j);
      });
}

}  // namespace hpt
