#pragma once
// One GPU per process of a data-parallel run (docs/mpi.md#several-gpus): the choice before Kokkos
// starts, and the console header's report after. Nothing changes in a build without a GPU backend.
#include <string>
#include <vector>

#include "core/communicator.hpp"

namespace hpt::app {

struct DevicePlacement {
  std::vector<std::string> kokkos_args;  // added to Kokkos::initialize's arguments
  std::string chosen_by;                 // the Kokkos argument or variable that chose instead
  HostRank host;                         // this process's place on its host
};

// Before Kokkos::initialize. On a GPU backend with several processes: the Kokkos argument that puts
// this process on GPU (its rank on the host) modulo (the GPUs it sees), unless `kokkos_args` or
// the environment already choose the device (then chosen_by names what does). Collective there:
// every process calls it. Otherwise nothing.
DevicePlacement choose_device(const Communicator& world,
                              const std::vector<std::string>& kokkos_args);

// After Kokkos::initialize: the header's lines on every process's GPU (on several processes an
// allgather, counted under control); empty without a GPU backend.
std::vector<std::string> describe_devices(const Communicator& world,
                                          const DevicePlacement& placement);

}  // namespace hpt::app
