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
// Parses "1,1024" into positive integers; InputError naming `key` otherwise.
std::vector<long> parse_positive_list(const std::string& list, const std::string& key);
// Parses "0.5,1,2" into positive finite reals; InputError naming `key` otherwise.
std::vector<double> parse_positive_reals(const std::string& list, const std::string& key);

}  // namespace hpt::app
