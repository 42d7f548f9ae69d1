#pragma once
// What every mode gets: the resolved configuration, its INI text, and where outputs go.
#include <string>

#include "core/config.hpp"

namespace hpt::app {

struct RunContext {
  const Config& config;
  std::string deck_path;
  std::string resolved_ini;  // stored as the hpt_deck attribute of every output file
  std::string output_dir;    // created before the mode runs
  std::string output_name;   // base name of output files

  std::string output_path(const std::string& suffix) const {
    return output_dir + "/" + output_name + suffix;
  }
};

}  // namespace hpt::app
