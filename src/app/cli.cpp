#include "app/cli.hpp"

#include "core/error.hpp"

namespace hpt::app {

std::string usage_text() {
  return "usage: hpt -i DECK [--set section.key=value ...] [--kokkos-num-threads=N]\n"
         "       hpt --help | --version\n"
         "  -i, --input DECK     input deck (INI: [run], [encoder], [dynamics], ...)\n"
         "  -s, --set K=V        override one option of the deck (repeatable)\n"
         "  --kokkos-*           options passed to Kokkos (e.g. --kokkos-num-threads=2)\n"
         "  -h, --help           this text and every deck option with its default\n"
         "  --version            version, precision and Kokkos backend\n";
}

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& flag) -> std::string {
      if (i + 1 >= argc) throw InputError("command line: " + flag + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      cl.help = true;
    } else if (a == "--version") {
      cl.version = true;
    } else if (a == "-i" || a == "--input") {
      cl.deck = value(a);
    } else if (a.rfind("--input=", 0) == 0) {
      cl.deck = a.substr(8);
    } else if (a == "-s" || a == "--set") {
      cl.overrides.push_back(value(a));
    } else if (a.rfind("--set=", 0) == 0) {
      cl.overrides.push_back(a.substr(6));
    } else if (a.rfind("--kokkos-", 0) == 0) {
      cl.kokkos_args.push_back(a);
    } else if (cl.deck.empty() && !a.empty() && a[0] != '-') {
      cl.deck = a;  // `hpt deck.ini` is accepted too
    } else {
      throw InputError("command line: unknown argument '" + a + "'\n" + usage_text());
    }
  }
  if (!cl.help && !cl.version && cl.deck.empty())
    throw InputError("command line: no input deck given (expected -i DECK)\n" + usage_text());
  return cl;
}

}  // namespace hpt::app
