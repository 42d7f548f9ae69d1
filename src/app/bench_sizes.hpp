#pragma once
// The benchmark sizes of docs/bench.md#sizes, by name.
#include <string>
#include <vector>

namespace hpt::app {

struct RolloutSize {
  std::string name;
  int members, scenarios, hidden, input, stochastic, horizon;
};

// Every size of the table in docs/bench.md#sizes (small, prototype, wide, batch, sweep).
const std::vector<RolloutSize>& perf_rollout_sizes();
// Parses "a,b,c" into sizes; InputError naming `key` and the unknown name otherwise.
std::vector<RolloutSize> parse_rollout_sizes(const std::string& list, const std::string& key);

}  // namespace hpt::app
