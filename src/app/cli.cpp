#include "app/cli.hpp"

#include "core/error.hpp"

namespace hpt::app {

std::string usage_text() {
  return "usage: hpt -i DECK [--set section.key=value ...] [--kokkos-num-threads=N]\n"
         "       hpt --help | --version\n"
         "  -i, --input DECK     input deck (INI: [run], [encoder], [dynamics], ...)\n"
         "  -s, --set K=V        override one option of the deck (repeatable)\n"
         "  --compare            run.mode = compare: the deck's hybrid run against full, budget\n"
         "                       and freeze training with the same seeds (compare.seeds)\n"
         "  --kokkos-*           options passed to Kokkos (e.g. --kokkos-num-threads=2)\n"
         "  -h, --help           this text and every deck option with its default\n"
         "  --version            version, precision, Kokkos backend, MPI (on or off)\n";
}

namespace {

// Kokkos options whose value must be a whole number; Kokkos 3.4 would read "abc" as 0 silently.
void check_kokkos_argument(const std::string& a) {
  static const char* numeric[] = {
      "--kokkos-num-threads", "--kokkos-threads",     "--kokkos-numa",     "--kokkos-device-id",
      "--kokkos-device",      "--kokkos-num-devices", "--kokkos-ndevices", "--kokkos-skip-device"};
  const auto eq = a.find('=');
  const std::string flag = a.substr(0, eq);
  for (const char* n : numeric) {
    if (flag != n) continue;
    const std::string v = eq == std::string::npos ? std::string() : a.substr(eq + 1);
    const bool digits =
        !v.empty() && v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw InputError("command line: " + flag + " = '" + v + "'; expected a whole number, e.g. " +
                       flag + "=2");
  }
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine cl;
  auto set_deck = [&](const std::string& d) {
    if (!cl.deck.empty())
      throw InputError("command line: two input decks given ('" + cl.deck + "' and '" + d +
                       "'); expected one -i DECK");
    cl.deck = d;
  };
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
    } else if (a == "--compare") {
      cl.overrides.push_back("run.mode=compare");
    } else if (a == "-i" || a == "--input") {
      set_deck(value(a));
    } else if (a.rfind("--input=", 0) == 0) {
      set_deck(a.substr(8));
    } else if (a == "-s" || a == "--set") {
      cl.overrides.push_back(value(a));
    } else if (a.rfind("--set=", 0) == 0) {
      cl.overrides.push_back(a.substr(6));
    } else if (a.rfind("--kokkos-", 0) == 0) {
      check_kokkos_argument(a);
      cl.kokkos_args.push_back(a);
    } else if (!a.empty() && a[0] != '-') {
      set_deck(a);  // `hpt deck.ini` is accepted too
    } else {
      throw InputError("command line: unknown argument '" + a + "'\n" + usage_text());
    }
  }
  if (!cl.help && !cl.version && cl.deck.empty())
    throw InputError("command line: no input deck given (expected -i DECK)\n" + usage_text());
  return cl;
}

}  // namespace hpt::app
