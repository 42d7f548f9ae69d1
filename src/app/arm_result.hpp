#pragma once
// What one finished arm of hpt --compare leaves beside its trace (<name>_arm.h5): the arm's
// resolved deck and the part of its training summary the comparison reads. A comparison stopped
// part-way (a signal, a batch system's time limit, a crash) continues with run.restart = auto:
// the arms whose file matches their deck are read back, the others train again from the start.
#include <optional>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "train/trainer.hpp"

namespace hpt::app {

// The validation curve as the 1-D datasets step, backward_passes, val_loss, val_accuracy and
// seconds of `group`: the layout of an arm in the comparison file and in an arm result.
void write_validations(io::H5Group& group, const std::vector<train::ValidationPoint>& points);

// Writes the arm's result to `path` atomically (a crash leaves the old file or none).
void write_arm_result(const std::string& path, const std::string& deck_ini,
                      const train::TrainSummary& summary);

struct StoredArm {
  std::optional<train::TrainSummary> summary;  // set when the file is there and its deck matches
  std::string why_not;                         // otherwise why it is not used ("" when missing)
};

// The summary stored at `path` when the file exists, is an arm result hpt can read, and was
// written by this build of hpt for exactly `deck_ini`.
StoredArm read_arm_result(const std::string& path, const std::string& deck_ini);

}  // namespace hpt::app
