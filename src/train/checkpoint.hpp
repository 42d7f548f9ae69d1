#pragma once
// Checkpoints: everything a training run needs to continue bit for bit on the same backend and
// thread count — step, model parameters, optimizer state and step count, the batch cursor, the
// telemetry history, the encoder's normaliser statistics — with the deck, format version, the data
// set's identity and a checksum. Written to a temporary and
// renamed into place.
#include <cstdint>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/error.hpp"
#include "kernels/telemetry_history.hpp"
#include "physics-style-modules/dataset/dataset.hpp"
#include "physics-style-modules/encoder/encoder.hpp"
#include "physics-style-modules/model/model.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"
#include "train/step_policy.hpp"
#include "train/training_forecaster.hpp"

namespace hpt::train {

// The mutable state of a run that a checkpoint captures (references to the owners).
struct TrainState {
  Model& model;
  Optimizer& optimizer;
  Dataset& dataset;
  TelemetryHistory<real>& history;
  Encoder& encoder;                           // its normaliser statistics are part of the state
  std::string dataset_identity;               // dataset_identity(dataset), computed once
  TrainingForecaster* forecaster = nullptr;   // the forecaster trained along, if any
  StepPolicy* policy = nullptr;               // the step policy, when it has state (hybrid)
  Communicator comm = Communicator::world();  // the processes training it data-parallel
};

// A checkpoint that cannot be used because its file is damaged (unreadable, or the checksum fails),
// as opposed to one that belongs to another run: restart = auto falls back past it.
class DamagedCheckpoint : public InputError {
 public:
  using InputError::InputError;
};

// The style, sizes and a fingerprint of the rows of `dataset`: a checkpoint resumes only on the
// data it was written for.
std::string dataset_identity(const Dataset& dataset);

// Writes the checkpoint of `state` after `step` completed steps to `path` (atomic), with the number
// of processes of the run. Only one process of a data-parallel run calls it (they hold the same).
void save_checkpoint(const std::string& path, const std::string& deck, std::int64_t step,
                     const TrainState& state);

// Restores `state` from `path` and returns its step. InputError naming the file when it has another
// format version or does not match the deck's data set, model, optimizer or history shapes;
// DamagedCheckpoint when it cannot be read or fails its checksum. A checkpoint of another number
// of processes loads as any other: the state is the same on every process and the data stream is
// one of global batches (docs/mpi.md).
std::int64_t load_checkpoint(const std::string& path, const TrainState& state);

// The number of processes of the run that wrote the checkpoint at `path` (1 for older files).
std::int64_t checkpoint_ranks(const std::string& path);

// Checkpoint file name of `step` for the run with output prefix `prefix` ("out/digits").
std::string checkpoint_path(const std::string& prefix, std::int64_t step);
// The checkpoints of the run, newest first (latest modification time, ties: higher step).
std::vector<std::string> checkpoints_newest_first(const std::string& prefix);
// The newest checkpoint of the run, or "" when there is none.
std::string latest_checkpoint(const std::string& prefix);

}  // namespace hpt::train
