#include "io/deck.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/quoted_key.hpp"

namespace po = boost::program_options;

namespace hpt::io {

namespace {

// A UTF-8 byte-order mark some editors write first: not part of the first key.
std::string without_bom(const std::string& text) {
  return text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
}

// A NUL byte would silently cut a value short in the parser (`lr = 0.05<NUL>junk` reads 0.05).
void refuse_nul_bytes(const std::string& text, const std::string& origin) {
  const auto nul = text.find('\0');
  if (nul == std::string::npos) return;
  const long line = 1 + long(std::count(text.begin(), text.begin() + long(nul), '\n'));
  throw InputError(origin + " line " + std::to_string(line) +
                   ": contains a NUL byte; expected a text file of 'key = value' lines");
}

}  // namespace

Config parse_deck_text(const OptionSchema& schema, const std::string& raw_text,
                       const std::string& origin, const std::vector<std::string>& overrides) {
  Config config(schema);
  refuse_nul_bytes(raw_text, origin);
  const std::string text = without_bom(raw_text);
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
      throw InputError(origin + ": option " + quoted_key(key) +
                       " is outside any [section] (expected e.g. [run] before it)");
    if (!seen.insert(key).second)
      throw InputError(origin + ": option " + quoted_key(key) + " is given more than once");
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
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    throw InputError("deck file '" + path + "' does not exist; expected an INI text file");
  if (!fs::is_regular_file(st))
    throw InputError("deck file '" + path + "' is " +
                     (fs::is_directory(st) ? "a directory" : "not a regular file") +
                     "; expected an INI text file");
  const auto size = fs::file_size(path, ec);
  if (ec || size > kMaxDeckBytes)
    throw InputError("deck file '" + path + "' has " +
                     (ec ? "an unknown size" : std::to_string(size) + " bytes") +
                     "; expected an INI text file of at most " + std::to_string(kMaxDeckBytes) +
                     " bytes");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("deck file '" + path + "' cannot be opened (unreadable)");
  std::stringstream buf;
  buf << f.rdbuf();
  if (f.bad()) throw InputError("deck file '" + path + "' cannot be read");
  return parse_deck_text(schema, buf.str(), path, overrides);
}

}  // namespace hpt::io
