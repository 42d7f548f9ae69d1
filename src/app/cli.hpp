#pragma once
// Command line of the hpt executable: `hpt -i DECK [--set section.key=value ...]`.
#include <string>
#include <vector>

namespace hpt::app {

struct CommandLine {
  std::string deck;
  std::vector<std::string> overrides;
  bool help = false;
  bool version = false;
  std::vector<std::string> kokkos_args;  // --kokkos-* passed through to Kokkos::initialize
};

// Parses argv; throws InputError naming the bad argument.
CommandLine parse_command_line(int argc, char** argv);

std::string usage_text();

}  // namespace hpt::app
