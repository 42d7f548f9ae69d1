#pragma once
// The rollout kernels that bench mode times at every size (bench.rollout_kernels), by name: auto
// (the dispatcher's choice), persistent, tiled (tiles of the backend's width), tiled-1,
// team-per-path, gemm.
#include <optional>
#include <string>
#include <vector>

#include "kernels/rollout_kernel.hpp"

namespace hpt::app {

// One entry of bench.rollout_kernels: a kernel, or none for auto.
using BenchRolloutKernel = std::optional<RolloutKernel>;

// Parses "a,b"; InputError naming `key` and the unknown name otherwise.
std::vector<BenchRolloutKernel> parse_rollout_kernels(const std::string& list,
                                                      const std::string& key);

}  // namespace hpt::app
