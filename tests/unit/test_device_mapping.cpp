// Which GPU each process of a data-parallel run uses: the mapping from the rank on the host, what
// leaves the choice to Kokkos, and the console header's report.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "core/device_mapping.hpp"

namespace {

// A stand-in environment for kokkos_device_choice.
std::function<const char*(const char*)> environment(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST(DeviceMapping, LocalRankModuloTheVisibleDevices) {
  // Four processes on four GPUs: one each; eight processes: two each, in turn.
  for (int r = 0; r < 4; ++r) EXPECT_EQ(hpt::device_for_local_rank(r, 4), r);
  EXPECT_EQ(hpt::device_for_local_rank(4, 4), 0);
  EXPECT_EQ(hpt::device_for_local_rank(7, 4), 3);
  // One visible GPU (e.g. CUDA_VISIBLE_DEVICES set per process): every process on its device 0.
  for (int r = 0; r < 3; ++r) EXPECT_EQ(hpt::device_for_local_rank(r, 1), 0);
  // Two processes, three GPUs: the third stays idle.
  EXPECT_EQ(hpt::device_for_local_rank(1, 3), 1);
  // No device, or no rank: none.
  EXPECT_EQ(hpt::device_for_local_rank(0, 0), -1);
  EXPECT_EQ(hpt::device_for_local_rank(-1, 2), -1);
}

TEST(DeviceMapping, TheKokkosArgumentIsTheDeviceId) {
  EXPECT_EQ(hpt::kokkos_device_argument(3), "--kokkos-device-id=3");
}

TEST(DeviceMapping, AChoiceOnTheCommandLineOrInTheEnvironmentIsLeftToKokkos) {
  const auto none = environment({});
  EXPECT_EQ(hpt::kokkos_device_choice({}, none), "");
  EXPECT_EQ(hpt::kokkos_device_choice({"--kokkos-num-threads=2"}, none), "");
  // Kokkos 3.4 and 4.x spellings on the command line.
  for (const std::string a :
       {"--kokkos-device-id=1", "--kokkos-device=1", "--kokkos-num-devices=2",
        "--kokkos-ndevices=2", "--kokkos-skip-device=0", "--kokkos-map-device-id-by=mpi_rank"})
    EXPECT_EQ(hpt::kokkos_device_choice({"--kokkos-num-threads=2", a}, none), a) << a;
  // A flag that only begins like one does not count.
  EXPECT_EQ(hpt::kokkos_device_choice({"--kokkos-devices-wanted=1"}, none), "");
  // And in the environment.
  for (const std::string v : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_SKIP_DEVICE",
                              "KOKKOS_MAP_DEVICE_ID_BY", "KOKKOS_VISIBLE_DEVICES"})
    EXPECT_EQ(hpt::kokkos_device_choice({}, environment({{v, "1"}})), v + "=1") << v;
  // CUDA_VISIBLE_DEVICES only narrows what hpt maps over.
  EXPECT_EQ(hpt::kokkos_device_choice({}, environment({{"CUDA_VISIBLE_DEVICES", "2,3"}})), "");
}

TEST(DeviceMapping, TheHeaderSaysWhichGpuEachProcessUses) {
  // One process: its GPU alone.
  EXPECT_EQ(hpt::describe_process_devices({{0, 0, 0, 1, "0000:1b:00"}}, ""),
            std::vector<std::string>{"rank 0: GPU 0 of 1 (PCI 0000:1b:00)"});
  // Two hosts of two processes and two GPUs each.
  const std::vector<hpt::ProcessDevice> four{{0, 0, 0, 2, "0000:1b:00"},
                                             {0, 1, 1, 2, "0000:2a:00"},
                                             {2, 0, 0, 2, "0000:1b:00"},
                                             {2, 1, 1, 2, "0000:2a:00"}};
  const std::vector<std::string> lines = hpt::describe_process_devices(four, "");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "one GPU per process: its rank on the host modulo the host's visible GPUs");
  EXPECT_EQ(lines[2], "rank 1: GPU 1 of 2 (PCI 0000:2a:00), local rank 1 on the host of rank 0");
  EXPECT_EQ(lines[3], "rank 2: GPU 0 of 2 (PCI 0000:1b:00), local rank 0 on the host of rank 2");
  // Three processes of one host on two GPUs: the first GPU is shared, and said so.
  const auto shared = hpt::describe_process_devices(
      {{0, 0, 0, 2, "0000:1b:00"}, {0, 1, 1, 2, "0000:2a:00"}, {0, 2, 0, 2, "0000:1b:00"}},
      "KOKKOS_DEVICE_ID=0");
  ASSERT_EQ(shared.size(), 4u);
  EXPECT_EQ(shared[0], "GPUs chosen by Kokkos (KOKKOS_DEVICE_ID=0)");
  EXPECT_EQ(shared[1],
            "rank 0: GPU 0 of 2 (PCI 0000:1b:00), local rank 0 on the host of rank 0; shares its "
            "GPU with rank 2");
  EXPECT_EQ(shared[2], "rank 1: GPU 1 of 2 (PCI 0000:2a:00), local rank 1 on the host of rank 0");
}
