#pragma once
// The hpt file conventions: every file hpt writes carries root attributes
//   hpt_format_version (int64, kHptFormatVersion), hpt_kind ("rollout", "model", "bench",
//   "checkpoint", "trace", "forecast", "compare", "watch"), hpt_version (code version),
//   hpt_backend, hpt_precision, hpt_deck (the resolved deck text),
// and open_hpt_file turns every way a file can be wrong into one hpt::InputError naming the file.
#include <cstdint>
#include <string>

#include "io/hdf5_file.hpp"

namespace hpt::io {

constexpr std::int64_t kHptFormatVersion = 1;

enum class HptFileKind {
  Rollout,
  Model,
  Bench,
  Checkpoint,
  Trace,
  Forecast,
  Compare,
  CompareArm,
  LevelModel,
  Watch
};

const char* kind_name(HptFileKind kind);  // "rollout", "model", ...

// The root attributes of an hpt file.
struct HptHeader {
  std::int64_t format_version = 0;
  std::string kind;
  std::string version;
  std::string backend;
  std::string precision;
  std::string deck;
};

// Writes the root attributes into `file` (format version kHptFormatVersion, this build's version
// and precision). `backend` defaults to io/console.hpp's backend_description().
void write_hpt_header(H5File& file, HptFileKind kind, const std::string& deck_text,
                      const std::string& backend = "");

// Reads the root attributes; InputError when the file is not an hpt file.
HptHeader read_hpt_header(const H5File& file);

// Opens an hpt file of kind `expected_kind` and format version `expected_version`. InputError,
// naming the file, when it is missing, not HDF5, truncated or damaged, an HDF5 file not written by
// hpt, of another kind or of another format version. Read-only unless `writable`.
H5File open_hpt_file(const std::string& path, HptFileKind expected_kind,
                     std::int64_t expected_version = kHptFormatVersion, bool writable = false);

}  // namespace hpt::io
