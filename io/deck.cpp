#include "io/deck.hpp"

#include <boost/program_options.hpp>
#include <fstream>
#include <set>
#include <sstream>

namespace po = boost::program_options;

namespace hpt::io {

Config parse_deck_text(const OptionSchema& schema, const std::string& text,
                       const std::string& origin, const std::vector<std::string>& overrides) {
  Config config(schema);
  std::istringstream in(text);
  po::options_description none;  // every key is validated by the schema, not by Boost
  po::parsed_options parsed(&none);
  try {
    parsed = po::parse_config_file(in, none, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw InputError(origin + ": cannot parse deck: " + e.what() +
                     " (expected 'key = value' lines inside [section] headers)");
  }
  std::set<std::string> seen;
  for (const auto& opt : parsed.options) {
    const std::string& key = opt.string_key;
    if (key.find('.') == std::string::npos)
      throw InputError(origin + ": option '" + key +
                       "' is outside any [section] (expected e.g. [run] before it)");
    if (!seen.insert(key).second)
      throw InputError(origin + ": option '" + key + "' is given more than once");
    config.set(key, opt.value.empty() ? std::string() : opt.value.front(), origin);
  }
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set '" + o + "': expected section.key=value");
    config.set(o.substr(0, eq), o.substr(eq + 1), "--set");
  }
  return config;
}

Config read_deck(const OptionSchema& schema, const std::string& path,
                 const std::vector<std::string>& overrides) {
  std::ifstream f(path);
  if (!f) throw InputError("deck file '" + path + "' cannot be opened (missing or unreadable)");
  std::stringstream buf;
  buf << f.rdbuf();
  return parse_deck_text(schema, buf.str(), path, overrides);
}

}  // namespace hpt::io
