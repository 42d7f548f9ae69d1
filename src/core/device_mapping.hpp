#pragma once
// Which GPU each process of a data-parallel run uses (docs/mpi.md#several-gpus): the processes of
// one host spread over its visible GPUs by their rank on that host, one GPU each where there are
// as many GPUs as processes. Pure functions: the GPU backend's calls are in app/device_placement.
#include <functional>
#include <string>
#include <vector>

namespace hpt {

// The device (an index among the visible ones, as CUDA_VISIBLE_DEVICES leaves them) of the process
// of rank `local_rank` among the processes of its host: local_rank modulo device_count. -1 where
// there is no device or the rank is negative.
int device_for_local_rank(int local_rank, int device_count);

// The Kokkos argument or environment variable that already chooses the device (Kokkos 3.4 and
// 4.x spellings: --kokkos-device-id, --kokkos-num-devices, --kokkos-map-device-id-by,
// KOKKOS_VISIBLE_DEVICES, ...), or "" where none does. Where one does, hpt leaves the choice to
// Kokkos. `getenv` is std::getenv but for tests.
std::string kokkos_device_choice(const std::vector<std::string>& kokkos_args,
                                 const std::function<const char*(const char*)>& getenv = nullptr);

// The Kokkos argument that selects visible device `device` (the same in Kokkos 3.4 and 4.x).
std::string kokkos_device_argument(int device);

// Where one process of a run computes.
struct ProcessDevice {
  int host = 0;          // the lowest rank on the process's host: equal for the processes of a host
  int local_rank = 0;    // rank among the processes of its host
  int device = -1;       // the CUDA device it uses (an index among the visible ones)
  int device_count = 0;  // devices visible to it
  std::string bus;       // the device's PCI address ("0000:1b:00"), to tell physical devices apart
};

// The console header's lines on the processes' devices, e.g. for two processes of one host:
//   "one GPU per process: its rank on the host modulo the host's visible GPUs"
//   "rank 0: GPU 0 of 2 (PCI 0000:1b:00), local rank 0 on the host of rank 0"
//   "rank 1: GPU 1 of 2 (PCI 0000:2a:00), local rank 1 on the host of rank 0"
// `chosen_by` names what chose the devices where hpt did not (a Kokkos argument or environment
// variable), else "". A device that several processes of one host share is said so.
std::vector<std::string> describe_process_devices(const std::vector<ProcessDevice>& processes,
                                                  const std::string& chosen_by);

}  // namespace hpt
