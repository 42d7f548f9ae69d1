#pragma once
// The `hdf5` style: a user's data in an HDF5 file with datasets /X (N x F, float or double) and /y
// (N integer labels -> classification, or N or N x K real targets -> regression). The file is read
// by io::read_xy_hdf5 (modules do not include io); this file checks the path and the requested
// task.
#include <string>

#include "core/raw_data.hpp"

namespace hpt {

// dataset.path, checked to be set and to exist (InputError otherwise).
std::string resolve_hdf5_path(const std::string& configured);

// When dataset.task was set explicitly, it must match what the file's /y holds (InputError
// otherwise).
void check_file_task(const RawData& raw, Task requested);

}  // namespace hpt
