#pragma once
// The rollout kernels by name (kernels/ensemble_rollout_dispatch.hpp chooses and runs them).

namespace hpt {

// Which kernel ensemble_rollout_auto runs (for reports, bench mode and tests).
enum class RolloutKernel : int {
  TeamPerPath = 0,
  Persistent = 1,
  Tiled = 2,
  TiledWide = 3,
  Gemm = 4
};

}  // namespace hpt
