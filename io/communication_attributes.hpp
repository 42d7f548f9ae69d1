#pragma once
// A run's communication counters as HDF5 attributes of a group (docs/outputs.md): for each traffic
// kind k (gradient, loss, evaluation, control) <prefix><k>_calls and <prefix><k>_bytes (int64) and
// <prefix><k>_seconds (float64), and the totals <prefix>calls, <prefix>bytes, <prefix>seconds.
#include <string>

#include "core/communication_counters.hpp"
#include "io/hdf5_file.hpp"

namespace hpt::io {

void write_communication(H5Group& group, const CommunicationCounters& counters,
                         const std::string& prefix);
// InputError naming the group when an attribute is missing.
CommunicationCounters read_communication(const H5Group& group, const std::string& prefix);

}  // namespace hpt::io
