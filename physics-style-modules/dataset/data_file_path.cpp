#include "physics-style-modules/dataset/data_file_path.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace hpt {

void require_data_file(const std::string& path, const std::string& expected) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_regular_file(st)) return;
  const char* what = !fs::exists(st)        ? "file not found"
                     : fs::is_directory(st) ? "is a directory"
                                            : "is not a regular file";
  throw InputError("dataset.path = '" + path + "': " + what + "; expected " + expected);
}

}  // namespace hpt
