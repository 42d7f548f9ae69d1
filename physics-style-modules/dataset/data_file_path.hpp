#pragma once
// The check every file-reading data set style makes of `dataset.path` before reading it.
#include <string>

namespace hpt {

// Throws InputError naming dataset.path, the value and `expected` unless `path` is an existing
// regular file: a missing path is "file not found", a directory is reported as a directory.
void require_data_file(const std::string& path, const std::string& expected);

}  // namespace hpt
