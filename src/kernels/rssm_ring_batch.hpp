#pragma once
// The online-training rings of R runs at once (run.mode = forecast: one latent per run, one shared
// ensemble): run r's ring is the r-th slice of each view, and one kernel pushes the step of every
// run that moved.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"
#include "kernels/rssm_window.hpp"

namespace hpt {

template <class Real, class Mem = MemSpace>
struct RssmRingBatch {
  View3<Real, Mem> features;  // (R, K+1, I)
  View2<Real, Mem> log_loss;  // (R, K+1)
  View4<Real, Mem> latents;   // (R, K+1, E, H)

  RssmRingBatch() = default;
  RssmRingBatch(int runs, int slots, int members, int hidden, int input)
      : features("rssm.rings.features", runs, slots, input),
        log_loss("rssm.rings.log_loss", runs, slots),
        latents("rssm.rings.latents", runs, slots, members, hidden) {}
  int runs() const { return int(log_loss.extent(0)); }
  int slots() const { return int(log_loss.extent(1)); }
  // Run r's ring (views into the batch).
  RssmRing<Real, Mem> ring(int r) const {
    RssmRing<Real, Mem> out;
    out.features = Kokkos::subview(features, r, Kokkos::ALL(), Kokkos::ALL());
    out.log_loss = Kokkos::subview(log_loss, r, Kokkos::ALL());
    out.latents = Kokkos::subview(latents, r, Kokkos::ALL(), Kokkos::ALL(), Kokkos::ALL());
    return out;
  }
};

// For every run r with slot(r) >= 0: ring slot slot(r) of run r <- x(r) (I), log_loss(r) and the
// latents before the step latents(r) (E, H).
template <class Space, class Real>
HPT_LAUNCHER void rssm_ring_push_batched(
    const Space& space, const RssmRingBatch<Real, typename Space::memory_space>& rings,
    const View1<int, typename Space::memory_space>& slot,
    const View2<Real, typename Space::memory_space>& x,
    const View1<Real, typename Space::memory_space>& log_loss,
    const View3<Real, typename Space::memory_space>& latents) {
  const int R = rings.runs(), I = int(rings.features.extent(2));
  const int E = int(rings.latents.extent(2)), H = int(rings.latents.extent(3));
  HPT_REQUIRE(int(slot.extent(0)) == R && int(x.extent(0)) == R && int(x.extent(1)) == I &&
                  int(log_loss.extent(0)) == R && int(latents.extent(0)) == R &&
                  int(latents.extent(1)) == E && int(latents.extent(2)) == H,
              "rssm_ring_push_batched: shapes of the rings and the step disagree");
  const int per_run = I + E * H + 1;
  const auto b = rings;
  Kokkos::parallel_for(
      "hpt::rssm_ring_push_batched",
      Kokkos::RangePolicy<Space>(space, 0, std::int64_t(R) * per_run),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const int r = int(k / per_run), i = int(k % per_run);
        const int s = slot(r);
        if (s < 0) return;
        if (i < I) {
          b.features(r, s, i) = x(r, i);
        } else if (i < I + E * H) {
          const int e = (i - I) / H, j = (i - I) % H;
          b.latents(r, s, e, j) = latents(r, e, j);
        } else {
          b.log_loss(r, s) = log_loss(r);
        }
      });
}

}  // namespace hpt
