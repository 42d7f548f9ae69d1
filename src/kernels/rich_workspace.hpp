#pragma once
// The workspace of the rich encoder's series-per-thread layout (encode_rich.hpp).
#include <Kokkos_Core.hpp>

#include "core/types.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rich_stats.hpp"

namespace hpt {

namespace rich {

// Scratch of the series-per-thread layout between its walks and its features: each run's
// statistics and loss tail. A caller that encodes repeatedly keeps one: on an H200 an encode of
// 65536 runs that allocated its own took about 0.2 ms longer than its kernels.
template <class Mem>
struct RichWorkspace {
  View1<RichStats, Mem> stats;
  View2<double, Mem> tails;

  void fit(int runs) {
    if (int(stats.extent(0)) == runs) return;
    stats = View1<RichStats, Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rich_stats"), runs);
    tails = View2<double, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "hpt::rich_tails"),
                               runs, kLossWindow);
  }
};

}  // namespace rich

}  // namespace hpt
