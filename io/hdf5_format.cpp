#include "io/hdf5_format.hpp"

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/console.hpp"

namespace hpt::io {

const char* kind_name(HptFileKind kind) {
  switch (kind) {
    case HptFileKind::Rollout:
      return "rollout";
    case HptFileKind::Model:
      return "model";
    case HptFileKind::Bench:
      return "bench";
    case HptFileKind::Checkpoint:
      return "checkpoint";
    case HptFileKind::Trace:
      return "trace";
    case HptFileKind::Compare:
      return "compare";
    case HptFileKind::CompareArm:
      return "compare_arm";
    case HptFileKind::Forecast:
      return "forecast";
    case HptFileKind::LevelModel:
      return "level_model";
    case HptFileKind::Watch:
      return "watch";
  }
  throw InternalError("unknown HptFileKind");
}

void write_hpt_header(H5File& file, HptFileKind kind, const std::string& deck_text,
                      const std::string& backend) {
  H5Group& root = file.root();
  root.write_int_attribute("hpt_format_version", kHptFormatVersion);
  root.write_string_attribute("hpt_kind", kind_name(kind));
  root.write_string_attribute("hpt_version", kVersion);
  root.write_string_attribute("hpt_backend", backend.empty() ? backend_description() : backend);
  root.write_string_attribute("hpt_precision", kPrecision);
  root.write_string_attribute("hpt_deck", deck_text);
}

HptHeader read_hpt_header(const H5File& file) {
  const H5Group& root = file.root();
  if (!root.has_attribute("hpt_format_version") || !root.has_attribute("hpt_kind"))
    throw InputError("file '" + file.path() +
                     "' is an HDF5 file but not one written by hpt (no hpt_format_version and "
                     "hpt_kind attributes on its root group)");
  HptHeader header;
  header.format_version = root.read_int_attribute("hpt_format_version");
  header.kind = root.read_string_attribute("hpt_kind");
  // Optional for reading: a file is usable without them, they only document where it came from.
  auto optional = [&](const char* name) {
    return root.has_attribute(name) ? root.read_string_attribute(name) : std::string();
  };
  header.version = optional("hpt_version");
  header.backend = optional("hpt_backend");
  header.precision = optional("hpt_precision");
  header.deck = optional("hpt_deck");
  return header;
}

H5File open_hpt_file(const std::string& path, HptFileKind expected_kind,
                     std::int64_t expected_version, bool writable) {
  H5File file = writable ? H5File::open_readwrite(path) : H5File::open_read(path);
  const HptHeader header = read_hpt_header(file);
  const std::string expected = kind_name(expected_kind);
  if (header.kind != expected)
    throw InputError("file '" + path + "' is an hpt " + header.kind + " file, expected an hpt " +
                     expected + " file");
  if (header.format_version != expected_version)
    throw InputError("file '" + path + "' has hpt format version " +
                     std::to_string(header.format_version) + " (written by hpt " +
                     (header.version.empty() ? std::string("unknown") : header.version) +
                     "), expected format version " + std::to_string(expected_version));
  return file;
}

}  // namespace hpt::io
