#include "app/bench_sizes.hpp"

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
  return pick_named_sizes(list, key, perf_rollout_sizes());
}

}  // namespace hpt::app
