#pragma once
// The benchmark sizes of docs/bench.md#sizes, by name.
#include <string>
#include <vector>

#include "core/config_lists.hpp"
#include "core/error.hpp"

namespace hpt::app {

// The entries of `table` (each with a `name`) that the comma-separated `list` names, in its order;
// InputError naming `key`, the unknown name and the known ones otherwise.
template <class Size>
std::vector<Size> pick_named_sizes(const std::string& list, const std::string& key,
                                   const std::vector<Size>& table) {
  std::vector<Size> out;
  for (const auto& name : split_list(list)) {
    const std::size_t before = out.size();
    for (const auto& s : table)
      if (s.name == name) out.push_back(s);
    if (out.size() > before) continue;
    std::string known;
    for (const auto& s : table) known += (known.empty() ? "" : ", ") + s.name;
    throw InputError(key + " = '" + list + "': unknown size '" + name + "' (known: " + known + ")");
  }
  return out;
}

struct RolloutSize {
  std::string name;
  int members, scenarios, hidden, input, stochastic, horizon;
};

// Every size of the table in docs/bench.md#sizes (small, prototype, wide, batch, sweep).
const std::vector<RolloutSize>& perf_rollout_sizes();
// Parses "a,b,c" into sizes; InputError naming `key` and the unknown name otherwise.
std::vector<RolloutSize> parse_rollout_sizes(const std::string& list, const std::string& key);

}  // namespace hpt::app
