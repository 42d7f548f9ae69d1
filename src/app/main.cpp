// hpt: parse the deck, build the styles, dispatch run.mode.
#include <iostream>

#include "app/cli.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  try {
    const auto cl = hpt::app::parse_command_line(argc, argv);
    if (cl.help) std::cout << hpt::app::usage_text();
    return 0;
  } catch (const hpt::InputError& e) {
    std::cerr << "hpt: error: " << e.what() << "\n";
    return hpt::kExitInputError;
  }
}
