#pragma once
// The memory a run will allocate, estimated from the deck (and a data file's declared shape) before
// anything is allocated, against what the execution space can give: a run that cannot fit is
// refused as bad input naming the keys, instead of failing inside an allocation later.
#include <cstdint>
#include <string>

#include "core/config.hpp"
#include "core/memory_need.hpp"

namespace hpt::app {

// What `mode` needs for the deck `config` (train, rollout, bench).
MemoryNeed estimate_memory_need(const Config& config, const std::string& mode);

// Bytes the default execution space can still allocate: free device memory on a GPU; on the host
// MemAvailable, capped by the cgroup limit a batch scheduler sets. 0 when unknown.
double available_memory_bytes();

// Throws InputError naming the keys, the bytes needed and available when `need` exceeds 90 % of
// `available` (a known available amount only).
void check_memory_need(const MemoryNeed& need, double available, const std::string& where);

}  // namespace hpt::app
