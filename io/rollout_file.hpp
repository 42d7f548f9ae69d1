#pragma once
// The output file of run.mode = rollout (docs/outputs.md#rollout-output): the ensemble's loss
// paths, the encoded features they started from and their statistics, written atomically.
#include <string>

#include "core/types.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/rollout_statistics.hpp"

namespace hpt::io {

void write_rollout_file(const std::string& path, const std::string& resolved_deck,
                        const RolloutOutputs<real>& out, const View2<real>& features,
                        const RolloutStatistics<real>& stats, double seconds, bool write_paths);

}  // namespace hpt::io
