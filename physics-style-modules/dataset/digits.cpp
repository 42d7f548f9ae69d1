#include "physics-style-modules/dataset/digits.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "physics-style-modules/dataset/data_file_path.hpp"

namespace hpt {

std::string default_digits_path() {
  const char* deps = std::getenv("HPT_DEPS_DIR");
  const char* home = std::getenv("HOME");
  std::string dir;
  if (deps && *deps)
    dir = deps;
  else
    dir = std::string(home ? home : "") + "/.cache/hpt-deps";
  return dir + "/data/digits.csv.gz";
}

std::string resolve_digits_path(const std::string& configured) {
  if (!configured.empty()) {
    require_data_file(configured,
                      "the digits data as a gzip CSV (64 pixel columns, then the label)");
    return configured;
  }
  const std::string path = default_digits_path();
  if (!std::filesystem::is_regular_file(path))
    throw InputError("dataset.style = digits with an empty dataset.path reads '" + path +
                     "', which does not exist: run run/setup to install the digits data "
                     "(or set dataset.path)");
  return path;
}

void check_digits_layout(RawData& raw) {
  if (raw.task != Task::Classification || raw.features != kDigitsPixels)
    throw InputError(raw.source +
                     ": expected the digits layout of 64 pixel columns and a label "
                     "column, found " +
                     std::to_string(raw.features) + " feature columns");
  for (std::size_t r = 0; r < raw.labels.size(); ++r)
    if (raw.labels[r] >= kDigitsClasses)
      throw InputError(raw.source + ": row " + std::to_string(r + 1) + " has label " +
                       std::to_string(raw.labels[r]) + "; expected a digit 0..9");
  raw.outputs = kDigitsClasses;
}

}  // namespace hpt
