#include "core/quoted_key.hpp"

namespace hpt {

std::string quoted_key(const std::string& key) {
  constexpr std::size_t kShown = 80;
  if (key.size() <= kShown) return "'" + key + "'";
  return "'" + key.substr(0, kShown) + "...' (" + std::to_string(key.size()) + " characters)";
}

}  // namespace hpt
