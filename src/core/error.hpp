#pragma once
// Error types: InputError is the user's (bad deck, file or value: exit 2), InternalError is ours
// (exit 1).
#include <stdexcept>
#include <string>

namespace hpt {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

class InternalError : public std::runtime_error {
 public:
  explicit InternalError(const std::string& what) : std::runtime_error(what) {}
};

constexpr int kExitInputError = 2;
constexpr int kExitInternalError = 1;
constexpr int kExitDiverged = 3;
// A signal stopped a run whose output cannot be completed by a restart (a comparison).
constexpr int kExitStoppedBySignal = 4;

// Throws InternalError with file/line when an invariant does not hold.
#define HPT_REQUIRE(cond, msg)                                                                   \
  do {                                                                                           \
    if (!(cond))                                                                                 \
      throw ::hpt::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + \
                                 (msg));                                                         \
  } while (0)

}  // namespace hpt
