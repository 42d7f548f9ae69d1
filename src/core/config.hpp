#pragma once
// The resolved run configuration: every option of the deck, declared with type, default, range and
// a one-line description (so `hpt --help` can print them), parsed from an INI deck plus --set
// overrides.
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpt {

enum class OptionType { Int, Real, Bool, String, Choice };

struct OptionSpec {
  std::string key;  // "section.name"
  OptionType type = OptionType::String;
  std::string default_value;
  std::string help;
  double min = -1e300;  // inclusive range for Int and Real
  double max = 1e300;
  std::vector<std::string> choices;  // for Choice
};

// The set of known options. Styles and modes declare theirs through the add_* helpers.
class OptionSchema {
 public:
  void add_int(const std::string& key, long def, const std::string& help, long min = -(1L << 62),
               long max = (1L << 62));
  void add_real(const std::string& key, double def, const std::string& help, double min = -1e300,
                double max = 1e300);
  void add_bool(const std::string& key, bool def, const std::string& help);
  void add_string(const std::string& key, const std::string& def, const std::string& help);
  void add_choice(const std::string& key, const std::string& def,
                  const std::vector<std::string>& choices, const std::string& help);

  const OptionSpec* find(const std::string& key) const;
  const std::map<std::string, OptionSpec>& all() const { return specs_; }
  // The known key closest to `key` by edit distance (for "did you mean" messages).
  std::string closest(const std::string& key) const;
  // Every option grouped by section, with default and description.
  std::string help_text() const;

 private:
  void add(OptionSpec spec);
  std::map<std::string, OptionSpec> specs_;
};

// Typed access to validated values. Values are validated when set, so getters cannot fail on input.
class Config {
 public:
  explicit Config(const OptionSchema& schema);

  // Sets `key` from text; `origin` names where the text came from (deck file, --set) for messages.
  void set(const std::string& key, const std::string& value, const std::string& origin);

  long get_int(const std::string& key) const;
  double get_real(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;  // also for Choice
  bool is_set(const std::string& key) const { return explicit_.count(key) != 0; }

  // The resolved configuration as INI text (every option, sections in order).
  std::string to_ini() const;
  const OptionSchema& schema() const { return *schema_; }

 private:
  const OptionSpec& spec(const std::string& key, OptionType expected) const;
  const OptionSchema* schema_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> explicit_;
};

// Levenshtein distance, used for "closest known key".
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace hpt
