#include "app/bench_kernels.hpp"

#include <string>
#include <utility>

#include "core/config_lists.hpp"
#include "core/error.hpp"

namespace hpt::app {

namespace {

template <class T, std::size_t N>
using NameTable = std::pair<const char*, T>[N];

// The entries of `list` looked up in `known`; InputError naming `key`, the unknown name and the
// known ones otherwise.
template <class T, std::size_t N>
std::vector<T> parse_names(const std::string& list, const std::string& key, const char* what,
                           const NameTable<T, N>& known) {
  std::vector<T> out;
  for (const auto& name : split_list(list)) {
    bool found = false;
    for (const auto& [n, k] : known)
      if (name == n) out.push_back(k), found = true;
    if (found) continue;
    std::string names;
    for (const auto& entry : known) names += std::string(names.empty() ? "" : ", ") + entry.first;
    throw InputError(key + " = '" + list + "': unknown " + what + " '" + name +
                     "' (known: " + names + ")");
  }
  return out;
}

const NameTable<RunLayout, 4> kLayoutNames = {{"auto", RunLayout::Auto},
                                              {"team", RunLayout::TeamPerRun},
                                              {"thread", RunLayout::ThreadPerRun},
                                              {"series", RunLayout::SeriesPerThread}};

}  // namespace

std::vector<BenchRolloutKernel> parse_rollout_kernels(const std::string& list,
                                                      const std::string& key) {
  static const NameTable<BenchRolloutKernel, 6> known = {
      {"auto", std::nullopt},
      {"persistent", RolloutKernel::Persistent},
      {"tiled", RolloutKernel::TiledWide},
      {"tiled-1", RolloutKernel::Tiled},
      {"team-per-path", RolloutKernel::TeamPerPath},
      {"gemm", RolloutKernel::Gemm}};
  return parse_names(list, key, "kernel", known);
}

std::vector<RunLayout> parse_encoder_layouts(const std::string& list, const std::string& key) {
  return parse_names(list, key, "layout", kLayoutNames);
}

std::string encoder_layout_name(RunLayout layout) {
  for (const auto& [n, k] : kLayoutNames)
    if (k == layout) return n;
  return "?";
}

}  // namespace hpt::app
