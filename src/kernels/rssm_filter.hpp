#pragma once
// Filtering of the RSSM ensemble's latents with one real observation: h_m <- GRU_m(h_m, x) for
// every member, through the gru_step kernel (its rows are the members' copies of x).
#include <Kokkos_Core.hpp>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/gru_step.hpp"
#include "kernels/gru_weights.hpp"

namespace hpt {

// Work buffers of rssm_filter_latents: x per member and the new latents.
template <class Real, class Mem = MemSpace>
struct RssmFilterWork {
  View3<Real, Mem> x;      // (1, E, I)
  View3<Real, Mem> h_out;  // (1, E, H)

  RssmFilterWork() = default;
  RssmFilterWork(int members, int hidden, int input)
      : x("rssm.filter.x", 1, members, input), h_out("rssm.filter.h_out", 1, members, hidden) {}
};

// latents (E, H) <- GRU(latents, x) for every member; x (I).
template <class Space, class Real>
HPT_LAUNCHER void rssm_filter_latents(
    const Space& space, const GruWeights<Real, typename Space::memory_space>& gru,
    const GruReset reset, const View1<Real, typename Space::memory_space>& x,
    const View2<Real, typename Space::memory_space>& latents,
    const RssmFilterWork<Real, typename Space::memory_space>& work) {
  const int E = gru.members(), H = gru.hidden(), I = gru.input();
  HPT_REQUIRE(int(x.extent(0)) == I, "rssm_filter_latents: x must have the GRU's input size");
  HPT_REQUIRE(int(latents.extent(0)) == E && int(latents.extent(1)) == H,
              "rssm_filter_latents: latents must be (E, H)");
  const auto xs = work.x;
  Kokkos::parallel_for(
      "hpt::rssm_filter_broadcast", Kokkos::RangePolicy<Space>(space, 0, E * I),
      KOKKOS_LAMBDA(const int i) { xs(0, i / I, i % I) = x(i % I); });
  // gru_step reads (1, E, H): the same memory as latents (E, H), LayoutRight.
  const View3<Real, typename Space::memory_space> h(latents.data(), 1, E, H);
  gru_step(space, gru, reset, work.x, h, work.h_out);
  Kokkos::deep_copy(space, h, work.h_out);
}

}  // namespace hpt
