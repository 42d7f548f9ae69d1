#include "app/bench_sizes.hpp"

#include "core/config_lists.hpp"
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

std::vector<RolloutSize> parse_rollout_sizes(const std::string& list, const std::string& key) {
  std::vector<RolloutSize> out;
  for (const auto& name : split_list(list)) {
    bool found = false;
    for (const auto& s : perf_rollout_sizes())
      if (s.name == name) out.push_back(s), found = true;
    if (!found)
      throw InputError(key + " = '" + list + "': unknown size '" + name +
                       "' (known: small, prototype, wide, batch, sweep)");
  }
  return out;
}

}  // namespace hpt::app
