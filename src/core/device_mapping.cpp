#include "core/device_mapping.hpp"

#include <cstdlib>

namespace hpt {

int device_for_local_rank(int local_rank, int device_count) {
  if (device_count <= 0 || local_rank < 0) return -1;
  return local_rank % device_count;
}

std::string kokkos_device_choice(const std::vector<std::string>& kokkos_args,
                                 const std::function<const char*(const char*)>& getenv) {
  // Kokkos 3.4 reads --kokkos-device(-id), --kokkos-(n|num-)devices, --kokkos-skip-device; 4.x
  // --kokkos-device-id, --kokkos-map-device-id-by (and the deprecated --kokkos-num-devices).
  static const char* flags[] = {"--kokkos-device-id",   "--kokkos-device",
                                "--kokkos-num-devices", "--kokkos-ndevices",
                                "--kokkos-skip-device", "--kokkos-map-device-id-by"};
  for (const auto& a : kokkos_args) {
    const std::string flag = a.substr(0, a.find('='));
    for (const char* f : flags)
      if (flag == f) return a;
  }
  // KOKKOS_VISIBLE_DEVICES (4.x) renumbers the devices Kokkos' device id counts.
  static const char* variables[] = {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_SKIP_DEVICE",
                                    "KOKKOS_MAP_DEVICE_ID_BY", "KOKKOS_VISIBLE_DEVICES"};
  for (const char* v : variables) {
    const char* value = getenv ? getenv(v) : std::getenv(v);
    if (value != nullptr) return std::string(v) + "=" + value;
  }
  return "";
}

std::string kokkos_device_argument(int device) {
  return "--kokkos-device-id=" + std::to_string(device);
}

std::vector<std::string> describe_process_devices(const std::vector<ProcessDevice>& processes,
                                                  const std::string& chosen_by) {
  std::vector<std::string> lines;
  if (processes.size() > 1)
    lines.push_back(chosen_by.empty() ? "one GPU per process: its rank on the host modulo the "
                                        "host's visible GPUs"
                                      : "GPUs chosen by Kokkos (" + chosen_by + ")");
  else if (!chosen_by.empty())
    lines.push_back("GPU chosen by Kokkos (" + chosen_by + ")");
  for (std::size_t r = 0; r < processes.size(); ++r) {
    const ProcessDevice& p = processes[r];
    std::string line = "rank " + std::to_string(r) + ": GPU " + std::to_string(p.device) + " of " +
                       std::to_string(p.device_count) + " (PCI " + p.bus + ")";
    if (processes.size() > 1)
      line += ", local rank " + std::to_string(p.local_rank) + " on the host of rank " +
              std::to_string(p.host);
    std::string sharing;
    for (std::size_t q = 0; q < processes.size(); ++q) {
      const ProcessDevice& o = processes[q];
      if (q != r && o.host == p.host && o.bus == p.bus)
        sharing += (sharing.empty() ? "" : ", ") + std::to_string(q);
    }
    if (!sharing.empty()) line += "; shares its GPU with rank " + sharing;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace hpt
