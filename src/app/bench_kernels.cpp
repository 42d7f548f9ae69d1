#include "app/bench_kernels.hpp"

#include <string>
#include <utility>

#include "core/config_lists.hpp"
#include "core/error.hpp"

namespace hpt::app {

std::vector<BenchRolloutKernel> parse_rollout_kernels(const std::string& list,
                                                      const std::string& key) {
  static const std::pair<const char*, BenchRolloutKernel> known[] = {
      {"auto", std::nullopt},
      {"persistent", RolloutKernel::Persistent},
      {"tiled", RolloutKernel::TiledWide},
      {"tiled-1", RolloutKernel::Tiled},
      {"team-per-path", RolloutKernel::TeamPerPath},
      {"gemm", RolloutKernel::Gemm}};
  std::vector<BenchRolloutKernel> out;
  for (const auto& name : split_list(list)) {
    bool found = false;
    for (const auto& [n, k] : known)
      if (name == n) out.push_back(k), found = true;
    if (found) continue;
    std::string names;
    for (const auto& entry : known) names += std::string(names.empty() ? "" : ", ") + entry.first;
    throw InputError(key + " = '" + list + "': unknown kernel '" + name + "' (known: " + names +
                     ")");
  }
  return out;
}

}  // namespace hpt::app
