#include "core/config_lists.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"

namespace hpt {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

std::vector<long> parse_positive_list(const std::string& list, const std::string& key,
                                      const std::string& example) {
  std::vector<long> out;
  for (const auto& item : split_list(list)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || v <= 0)
      throw InputError(key + " = '" + list + "': '" + item +
                       "' is not a positive integer (expected e.g. " + example + ")");
    out.push_back(v);
  }
  return out;
}

std::vector<double> parse_positive_reals(const std::string& list, const std::string& key,
                                         const std::string& example) {
  std::vector<double> out;
  for (const auto& item : split_list(list)) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v) || !(v > 0))
      throw InputError(key + " = '" + list + "': '" + item +
                       "' is not a positive number (expected e.g. " + example + ")");
    out.push_back(v);
  }
  if (out.empty())
    throw InputError(key + " = '" + list + "': no number given (expected e.g. " + example + ")");
  return out;
}

}  // namespace hpt
