#pragma once
// Crash injection for the crash tests: with HPT_CRASH_AT=<name>:<step> in the environment the
// process kills itself (SIGKILL, nothing flushed) when it reaches crash point <name> at <step>, so
// a test can stop a run at an exact instant between two file updates. Unset, it costs one getenv.
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace hpt {

inline void crash_point(const char* name, std::int64_t step) {
  static const char* const wanted = std::getenv("HPT_CRASH_AT");
  if (wanted && std::string(wanted) == std::string(name) + ":" + std::to_string(step))
    std::raise(SIGKILL);
}

// Fault injection for the recovery tests: with HPT_FAULT_AT=<name>:<step> in the environment,
// fault_point(<name>, <step>) is true (e.g. the hybrid loop then treats that step's loss as
// non-finite; signal_spike: its loss and gradient norm look 10^4 times larger to the divergence
// monitor). Unset, it costs one getenv.
inline bool fault_point(const char* name, std::int64_t step) {
  static const char* const wanted = std::getenv("HPT_FAULT_AT");
  return wanted && std::string(wanted) == std::string(name) + ":" + std::to_string(step);
}

}  // namespace hpt
