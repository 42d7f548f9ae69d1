#include "app/device_placement.hpp"

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <type_traits>

#include "core/device_mapping.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpt::app {

namespace {

constexpr bool kGpuBackend =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value;
#else
    false;
#endif

// The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies); 0 where it cannot tell.
int visible_devices() {
#if defined(KOKKOS_ENABLE_CUDA)
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

// The device Kokkos runs on (after Kokkos::initialize): its index, the visible devices, and its
// PCI domain, bus and device numbers (-1 where unknown).
std::vector<double> current_device() {
  std::vector<double> d{-1, double(visible_devices()), -1, -1, -1};
#if defined(KOKKOS_ENABLE_CUDA)
  int device = -1;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaGetDeviceProperties(&prop, device) == cudaSuccess)
    d = {double(device), d[1], double(prop.pciDomainID), double(prop.pciBusID),
         double(prop.pciDeviceID)};
#endif
  return d;
}

std::string pci_address(const double* pci) {
  if (pci[0] < 0) return "unknown";
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x", unsigned(pci[0]), unsigned(pci[1]),
                unsigned(pci[2]));
  return text;
}

}  // namespace

DevicePlacement choose_device(const Communicator& world,
                              const std::vector<std::string>& kokkos_args) {
  DevicePlacement placement;
  if (!kGpuBackend || world.size() == 1) return placement;
  placement.host = host_rank();  // collective: before anything a process may skip
  placement.chosen_by = kokkos_device_choice(kokkos_args);
  if (!placement.chosen_by.empty()) return placement;
  const int device = device_for_local_rank(placement.host.local_rank, visible_devices());
  if (device >= 0) placement.kokkos_args.push_back(kokkos_device_argument(device));
  return placement;
}

std::vector<std::string> describe_devices(const Communicator& world,
                                          const DevicePlacement& placement) {
  if (!kGpuBackend) return {};
  // Per process: host, local rank, then current_device()'s five numbers.
  std::vector<double> mine{double(placement.host.host), double(placement.host.local_rank)};
  for (double v : current_device()) mine.push_back(v);
  const std::vector<double> all = world.allgather(mine, Traffic::Control);  // one process: mine
  std::vector<ProcessDevice> processes;
  for (std::size_t at = 0; at + mine.size() <= all.size(); at += mine.size()) {
    const double* v = all.data() + at;
    processes.push_back({int(v[0]), int(v[1]), int(v[2]), int(v[3]), pci_address(v + 4)});
  }
  return describe_process_devices(processes, placement.chosen_by);
}

}  // namespace hpt::app
