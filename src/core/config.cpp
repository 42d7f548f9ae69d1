#include "core/config.hpp"
#include "core/quoted_key.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace hpt {

namespace {

std::string type_name(const OptionSpec& s) {
  switch (s.type) {
    case OptionType::Int:
      return "an integer";
    case OptionType::Real:
      return "a real number";
    case OptionType::Bool:
      return "true or false";
    case OptionType::String:
      return "a string";
    case OptionType::Choice: {
      std::string c;
      for (const auto& x : s.choices) c += (c.empty() ? "" : " | ") + x;
      return "one of " + c;
    }
  }
  return "?";
}

std::string fmt_num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string range_text(const OptionSpec& s) {
  if (s.type != OptionType::Int && s.type != OptionType::Real) return "";  // ranges are numeric
  const bool lo = s.min > -1e299 && s.min > -double(1L << 62);
  const bool hi = s.max < 1e299 && s.max < double(1L << 62);
  if (lo && hi) return " in [" + fmt_num(s.min) + ", " + fmt_num(s.max) + "]";
  if (lo) return " >= " + fmt_num(s.min);
  if (hi) return " <= " + fmt_num(s.max);
  return "";
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool parse_bool(const std::string& v, bool& out) {
  std::string l = v;
  std::transform(l.begin(), l.end(), l.begin(), ::tolower);
  if (l == "true" || l == "on" || l == "yes" || l == "1") return out = true, true;
  if (l == "false" || l == "off" || l == "no" || l == "0") return out = false, true;
  return false;
}

// Validates `text` against `s`; returns the canonical text or throws InputError naming key and
// value.
std::string validate(const OptionSpec& s, const std::string& raw, const std::string& origin) {
  const std::string text = trim(raw);
  auto bad = [&](const std::string& why) {
    return InputError(origin + ": " + s.key + " = '" + text + "' " + why);
  };
  switch (s.type) {
    case OptionType::Int: {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE)
        throw bad("is not an integer; expected " + type_name(s) + range_text(s));
      if (double(v) < s.min || double(v) > s.max)
        throw bad("is out of range; expected an integer" + range_text(s));
      return std::to_string(v);
    }
    case OptionType::Real: {
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        throw bad("is not a finite real number; expected a real number" + range_text(s));
      if (v < s.min || v > s.max)
        throw bad("is out of range; expected a real number" + range_text(s));
      return text;
    }
    case OptionType::Bool: {
      bool b = false;
      if (!parse_bool(text, b)) throw bad("is not a boolean; expected true or false");
      return b ? "true" : "false";
    }
    case OptionType::Choice:
      if (std::find(s.choices.begin(), s.choices.end(), text) == s.choices.end())
        throw bad("is not allowed; expected " + type_name(s));
      return text;
    case OptionType::String:
      return text;
  }
  return text;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void OptionSchema::add(OptionSpec spec) {
  HPT_REQUIRE(spec.key.find('.') != std::string::npos, "option key needs a section: " + spec.key);
  HPT_REQUIRE(specs_.count(spec.key) == 0, "option declared twice: " + spec.key);
  // Validate the default once so a bad declaration is caught in every test run.
  spec.default_value = validate(spec, spec.default_value, "default");
  specs_[spec.key] = std::move(spec);
}

void OptionSchema::add_int(const std::string& key, long def, const std::string& help, long min,
                           long max) {
  OptionSpec s{key, OptionType::Int, std::to_string(def), help, double(min), double(max), {}};
  add(std::move(s));
}
void OptionSchema::add_real(const std::string& key, double def, const std::string& help, double min,
                            double max) {
  OptionSpec s{key, OptionType::Real, fmt_num(def), help, min, max, {}};
  add(std::move(s));
}
void OptionSchema::add_bool(const std::string& key, bool def, const std::string& help) {
  add(OptionSpec{key, OptionType::Bool, def ? "true" : "false", help, 0, 0, {}});
}
void OptionSchema::add_string(const std::string& key, const std::string& def,
                              const std::string& help) {
  add(OptionSpec{key, OptionType::String, def, help, 0, 0, {}});
}
void OptionSchema::add_choice(const std::string& key, const std::string& def,
                              const std::vector<std::string>& choices, const std::string& help) {
  add(OptionSpec{key, OptionType::Choice, def, help, 0, 0, choices});
}

const OptionSpec* OptionSchema::find(const std::string& key) const {
  auto it = specs_.find(key);
  return it == specs_.end() ? nullptr : &it->second;
}

std::string OptionSchema::closest(const std::string& key) const {
  // No known key is longer than this; a longer one is a pasted line, not a typo (and would make the
  // distance quadratic in its length).
  constexpr std::size_t kLongestKey = 64;
  if (key.size() > kLongestKey) return "none this long";
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& kv : specs_) {
    const std::size_t d = edit_distance(key, kv.first);
    if (d < best_d) best_d = d, best = kv.first;
  }
  return best;
}

std::string OptionSchema::help_text() const {
  std::ostringstream os;
  std::string section;
  for (const auto& kv : specs_) {
    const auto& s = kv.second;
    const std::string sec = s.key.substr(0, s.key.find('.'));
    if (sec != section) {
      section = sec;
      os << "\n[" << sec << "]\n";
    }
    std::string lhs = "  " + s.key.substr(s.key.find('.') + 1) + " = " + s.default_value;
    if (lhs.size() < 34) lhs.resize(34, ' ');
    os << lhs << "  " << s.help << " (" << type_name(s) << range_text(s) << ")\n";
  }
  return os.str();
}

Config::Config(const OptionSchema& schema) : schema_(&schema) {
  for (const auto& kv : schema.all()) values_[kv.first] = kv.second.default_value;
}

void Config::set(const std::string& key, const std::string& value, const std::string& origin) {
  const OptionSpec* s = schema_->find(key);
  if (!s)
    throw InputError(origin + ": unknown option " + quoted_key(key) +
                     " (closest known option: " + schema_->closest(key) + ")");
  values_[key] = validate(*s, value, origin);
  explicit_[key] = true;
}

const OptionSpec& Config::spec(const std::string& key, OptionType expected) const {
  const OptionSpec* s = schema_->find(key);
  HPT_REQUIRE(s != nullptr, "option not declared: " + key);
  HPT_REQUIRE(
      s->type == expected || (expected == OptionType::String && s->type == OptionType::Choice),
      "option read with the wrong type: " + key);
  return *s;
}

long Config::get_int(const std::string& key) const {
  spec(key, OptionType::Int);
  return std::strtol(values_.at(key).c_str(), nullptr, 10);
}
double Config::get_real(const std::string& key) const {
  spec(key, OptionType::Real);
  return std::strtod(values_.at(key).c_str(), nullptr);
}
bool Config::get_bool(const std::string& key) const {
  spec(key, OptionType::Bool);
  return values_.at(key) == "true";
}
const std::string& Config::get_string(const std::string& key) const {
  spec(key, OptionType::String);
  return values_.at(key);
}

std::string Config::to_ini() const {
  std::ostringstream os;
  std::string section;
  for (const auto& kv : values_) {
    const std::string sec = kv.first.substr(0, kv.first.find('.'));
    if (sec != section) {
      os << (section.empty() ? "" : "\n") << "[" << sec << "]\n";
      section = sec;
    }
    os << kv.first.substr(kv.first.find('.') + 1) << " = " << kv.second << "\n";
  }
  return os.str();
}

}  // namespace hpt
