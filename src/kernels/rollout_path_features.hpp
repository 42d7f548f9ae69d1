#pragma once
// Which columns of a rollout path's input x change along the path: advance_loss_features
// (rollout_features.hpp) writes the [R] features of rich_features.hpp (mode Rich) or x[0] (mode
// LossOnly), and nothing else writes x once a path has started from x0, so every other column keeps
// x0's value for every path and step of a rollout. The tiled rollout (ensemble_rollout_tiled.hpp)
// keeps only these columns per path and sums the weights of the others with x0 once per member.
// test_rollout_tiled.cpp checks that advance_loss_features writes exactly these columns.
#include <Kokkos_Core.hpp>

#include "kernels/loss_state.hpp"
#include "kernels/rich_features.hpp"

namespace hpt {
namespace detail {

// How many columns of x change along a path in this mode.
KOKKOS_INLINE_FUNCTION constexpr int path_feature_count(const FeatureUpdate mode) {
  return mode == FeatureUpdate::LossOnly ? 1 : 9;
}

// The column of x that changes as the k-th (ascending; k < path_feature_count(mode)). LossOnly's
// one column, x[0], is Rich's first (kLogLoss = 0), so a column's slot k is the same in both modes.
KOKKOS_INLINE_FUNCTION constexpr int path_feature_column(const int k) {
  switch (k) {
    case 0:
      return rich::kLogLoss;
    case 1:
      return rich::kLossSlope8;
    case 2:
      return rich::kLossEmaGap4;
    case 3:
      return rich::kLossEmaGap16;
    case 4:
      return rich::kLossEmaGap64;
    case 5:
      return rich::kLossBestGap;
    case 6:
      return rich::kLossLastDelta;
    case 7:
      return rich::kLossZ32;
    case 8:
      return rich::kLossProgress;
    default:
      return -1;
  }
}

// The slot k of column c (path_feature_column(k) == c), or -1 where c keeps x0's value in mode
// Rich (in LossOnly every column but 0 does).
KOKKOS_INLINE_FUNCTION constexpr int path_feature_slot(const int c) {
  for (int k = 0; k < 9; ++k)
    if (path_feature_column(k) == c) return k;
  return -1;
}

// Whether column c of x keeps x0's value along every path of a rollout in this mode.
KOKKOS_INLINE_FUNCTION constexpr bool path_feature_constant(const FeatureUpdate mode, const int c) {
  const int k = path_feature_slot(c);
  return k < 0 || k >= path_feature_count(mode);
}

}  // namespace detail
}  // namespace hpt
