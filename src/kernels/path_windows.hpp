#pragma once
// The forecast of a horizon h as the scoring defines its target: along every rollout path, the mean
// loss over the path entries h-before .. h+after (entry k is the loss k steps after the origin).
#include <Kokkos_Core.hpp>
#include <vector>

#include "core/error.hpp"
#include "core/launcher.hpp"
#include "core/types.hpp"

namespace hpt {

// Largest window mean kept (log 69): a diverging imagined path saturates here instead of at inf.
constexpr double kPathWindowMax = 1e30;

// out(r, n, m, j) = mean over k = horizons(j)-before .. horizons(j)+after of paths(r, n, m, k), for
// the runs with active(r) != 0. paths (R, N, E, Y+1), out (R, N, E, K); every window must lie in
// [0, Y] (checked on the host copy `host_horizons`).
template <class Space, class Real>
HPT_LAUNCHER void window_mean_paths(const Space& space,
                                    const View4<Real, typename Space::memory_space>& paths,
                                    const View1<int, typename Space::memory_space>& horizons,
                                    const std::vector<int>& host_horizons, const int before,
                                    const int after,
                                    const View1<int, typename Space::memory_space>& active,
                                    const View4<Real, typename Space::memory_space>& out) {
  const int R = int(paths.extent(0)), N = int(paths.extent(1)), E = int(paths.extent(2));
  const int Y = int(paths.extent(3)) - 1;
  const int K = int(horizons.extent(0));
  HPT_REQUIRE(int(host_horizons.size()) == K, "window_mean_paths: horizons differ from host copy");
  for (int h : host_horizons)
    HPT_REQUIRE(h - before >= 0 && h + after <= Y, "window_mean_paths: window outside the paths");
  HPT_REQUIRE(int(out.extent(0)) == R && int(out.extent(1)) == N && int(out.extent(2)) == E &&
                  int(out.extent(3)) == K && int(active.extent(0)) == R,
              "window_mean_paths: out must be (R, N, E, K) and active (R)");
  const auto p = paths;
  const auto hz = horizons;
  const auto act = active;
  const auto o = out;
  const Real count = Real(before + after + 1);
  Kokkos::parallel_for(
      "hpt::window_mean_paths",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<4>>(space, {0, 0, 0, 0}, {R, N, E, K}),
      KOKKOS_LAMBDA(const int r, const int n, const int m, const int j) {
        if (act(r) == 0) return;
        Real sum = 0;
        for (int k = hz(j) - before; k <= hz(j) + after; ++k) sum += p(r, n, m, k);
        // An imagined path may overflow to inf: bounded, so means of its log stay finite.
        const Real mean = sum / count;
        o(r, n, m, j) = mean < Real(kPathWindowMax) ? mean : Real(kPathWindowMax);
      });
}

}  // namespace hpt
