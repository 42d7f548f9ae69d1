#include "physics-style-modules/dataset/hdf5_file.hpp"

#include "core/error.hpp"
#include "physics-style-modules/dataset/data_file_path.hpp"

namespace hpt {

std::string resolve_hdf5_path(const std::string& configured) {
  if (configured.empty())
    throw InputError(
        "dataset.path is empty; dataset.style = hdf5 needs the path of an HDF5 file "
        "with datasets /X (N x F) and /y (N labels or N x K targets)");
  require_data_file(configured, "an HDF5 file with datasets /X and /y");
  return configured;
}

void check_file_task(const RawData& raw, Task requested) {
  if (raw.task == requested) return;
  throw InputError(
      std::string("dataset.task = '") + task_name(requested) + "' does not fit " + raw.source +
      (raw.task == Task::Regression
           ? ": its /y holds real numbers (regression targets); store class labels as integers"
           : ": its /y holds integer class labels (classification)"));
}

}  // namespace hpt
