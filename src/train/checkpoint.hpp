#pragma once
// Checkpoints (SPEC 9): everything a training run needs to continue bit for bit on the same backend
// and thread count — step, model parameters, optimizer state and step count, the batch cursor, the
// telemetry history — with the deck, format version and a checksum. Written to a temporary and
// renamed into place.
#include <cstdint>
#include <string>

#include "kernels/telemetry_history.hpp"
#include "modules/dataset/dataset.hpp"
#include "modules/model/model.hpp"
#include "modules/optimizer/optimizer.hpp"

namespace hpt::train {

// The mutable state of a run that a checkpoint captures (references to the owners).
struct TrainState {
  Model& model;
  Optimizer& optimizer;
  Dataset& dataset;
  TelemetryHistory<real>& history;
};

// Writes the checkpoint of `state` after `step` completed steps to `path` (atomic).
void save_checkpoint(const std::string& path, const std::string& deck, std::int64_t step,
                     const TrainState& state);

// Restores `state` from `path` and returns its step. InputError naming the file when it is not a
// checkpoint, has another format version, does not match the deck's model/optimizer/history shapes,
// or fails its checksum.
std::int64_t load_checkpoint(const std::string& path, const TrainState& state);

// Checkpoint file name of `step` for the run with output prefix `prefix` ("out/digits").
std::string checkpoint_path(const std::string& prefix, std::int64_t step);
// The newest checkpoint of the run (highest step), or "" when there is none.
std::string latest_checkpoint(const std::string& prefix);

}  // namespace hpt::train
