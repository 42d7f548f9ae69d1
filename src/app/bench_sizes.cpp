#include "app/bench_sizes.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"

namespace hpt::app {

const std::vector<RolloutSize>& perf_rollout_sizes() {
  static const std::vector<RolloutSize> sizes = {{"small", 5, 1, 256, 64, 32, 1000},
                                                 {"prototype", 3, 1, 256, 64, 32, 50},
                                                 {"wide", 5, 1, 1024, 64, 32, 200},
                                                 {"batch", 5, 1024, 256, 64, 32, 200},
                                                 {"sweep", 5, 16384, 128, 64, 32, 100}};
  return sizes;
}

namespace {
std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}
}  // namespace

std::vector<RolloutSize> parse_rollout_sizes(const std::string& list, const std::string& key) {
  std::vector<RolloutSize> out;
  for (const auto& name : split(list)) {
    bool found = false;
    for (const auto& s : perf_rollout_sizes())
      if (s.name == name) out.push_back(s), found = true;
    if (!found)
      throw InputError(key + " = '" + list + "': unknown size '" + name +
                       "' (known: small, prototype, wide, batch, sweep)");
  }
  return out;
}

std::vector<long> parse_positive_list(const std::string& list, const std::string& key) {
  std::vector<long> out;
  for (const auto& item : split(list)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || v <= 0)
      throw InputError(key + " = '" + list + "': '" + item +
                       "' is not a positive integer (expected e.g. 1,1024,65536)");
    out.push_back(v);
  }
  return out;
}

std::vector<double> parse_positive_reals(const std::string& list, const std::string& key) {
  std::vector<double> out;
  for (const auto& item : split(list)) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v) || !(v > 0))
      throw InputError(key + " = '" + list + "': '" + item +
                       "' is not a positive number (expected e.g. 0.5,1,2)");
    out.push_back(v);
  }
  if (out.empty())
    throw InputError(key + " = '" + list + "': no number given (expected e.g. 0.5,1,2)");
  return out;
}

}  // namespace hpt::app
