#pragma once
// The memory a run will allocate, estimated from the deck before anything is allocated: each style
// reports its own part (Registry::memory_need), the app adds them and compares with what the
// execution space can give.
#include <string>

namespace hpt {

struct MemoryNeed {
  double bytes = 0;       // leading terms of the allocations
  std::string keys;       // the deck keys (with values) that set them
  double parameters = 0;  // trainable values of a model style (optimizer and snapshot buffers)

  MemoryNeed& operator+=(const MemoryNeed& other) {
    bytes += other.bytes;
    parameters += other.parameters;
    if (!other.keys.empty()) keys += (keys.empty() ? "" : ", ") + other.keys;
    return *this;
  }
};

}  // namespace hpt
