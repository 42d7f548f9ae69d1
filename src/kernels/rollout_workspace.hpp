#pragma once
// Device buffers a rollout kernel needs besides its inputs and outputs, kept between calls: the
// persistent kernel's exchange buffers and path-barrier counters. A caller that rolls out again
// and again at the same sizes (the forecaster, the bench) passes one workspace, so a rollout does
// not allocate and free them every call (on a GPU a free waits for the device).
#include <Kokkos_Core.hpp>
#include <string>

#include "core/types.hpp"

namespace hpt {

template <class Real, class Mem>
struct RolloutWorkspace {
  View3<Real, Mem> h;     // (parity, path, unit): the new h of every path, by step parity
  View3<Real, Mem> rh;    // (parity, path, unit): r * h (GRU reset Before only; else 0 wide)
  View4<Real, Mem> part;  // (parity, path, team, head value): the teams' partial head sums
  View1<unsigned int, Mem> counters;  // per path: arrivals at its barrier

  // Buffers for P paths of H units split over T teams with Q head values; reallocated (without
  // initialising) only where an extent differs from what they hold.
  void size_persistent(const int P, const int H, const int T, const int Q,
                       const bool reset_before) {
    const int rh_units = reset_before ? H : 0;
    if (!same(h, 2, P, H)) h = alloc3("hpt::persistent.h", P, H);
    if (!same(rh, 2, P, rh_units)) rh = alloc3("hpt::persistent.rh", P, rh_units);
    if (part.extent(0) != 2 || int(part.extent(1)) != P || int(part.extent(2)) != T ||
        int(part.extent(3)) != Q)
      part = View4<Real, Mem>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::persistent.part"), 2, P, T, Q);
    if (int(counters.extent(0)) != P)
      counters = View1<unsigned int, Mem>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::persistent.counters"), P);
  }

 private:
  static bool same(const View3<Real, Mem>& v, const int a, const int b, const int c) {
    return int(v.extent(0)) == a && int(v.extent(1)) == b && int(v.extent(2)) == c;
  }
  static View3<Real, Mem> alloc3(const std::string& label, const int P, const int units) {
    return View3<Real, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), 2, P, units);
  }
};

}  // namespace hpt
