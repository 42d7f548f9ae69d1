#pragma once
// The kernels that bench mode times, by name: the rollout kernels of every size
// (bench.rollout_kernels: auto, the dispatcher's choice, persistent, tiled (tiles of the backend's
// width), tiled-1, team-per-path, gemm) and the layouts of the rich encoder's feature kernel
// (bench.encoder_layouts: auto, team, thread, series).
#include <optional>
#include <string>
#include <vector>

#include "kernels/rollout_kernel.hpp"
#include "kernels/run_layout.hpp"

namespace hpt::app {

// One entry of bench.rollout_kernels: a kernel, or none for auto.
using BenchRolloutKernel = std::optional<RolloutKernel>;

// Parses "a,b"; InputError naming `key` and the unknown name otherwise.
std::vector<BenchRolloutKernel> parse_rollout_kernels(const std::string& list,
                                                      const std::string& key);

// Parses "a,b" of layout names (empty: none); InputError naming `key` and the unknown name.
std::vector<RunLayout> parse_encoder_layouts(const std::string& list, const std::string& key);

// The bench's name of a layout (auto, team, thread, series).
std::string encoder_layout_name(RunLayout layout);

}  // namespace hpt::app
