// The rollout workspace (kernels/rollout_workspace.hpp): buffers of the requested extents, kept
// (the same memory) while the sizes repeat, and reallocated where one changes.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "core/types.hpp"
#include "kernels/rollout_workspace.hpp"

namespace {

using Workspace = hpt::RolloutWorkspace<float, Kokkos::HostSpace>;

void expect_extents(const Workspace& w, int P, int H, int T, int Q, int rh_units) {
  EXPECT_EQ(w.h.extent(0), 2u);
  EXPECT_EQ(int(w.h.extent(1)), P);
  EXPECT_EQ(int(w.h.extent(2)), H);
  EXPECT_EQ(int(w.rh.extent(1)), P);
  EXPECT_EQ(int(w.rh.extent(2)), rh_units);
  EXPECT_EQ(int(w.part.extent(1)), P);
  EXPECT_EQ(int(w.part.extent(2)), T);
  EXPECT_EQ(int(w.part.extent(3)), Q);
  EXPECT_EQ(int(w.counters.extent(0)), P);
}

TEST(RolloutWorkspace, KeepsItsBuffersWhileTheSizesRepeat) {
  Workspace w;
  w.size_persistent(3, 16, 2, 7, false);
  expect_extents(w, 3, 16, 2, 7, 0);
  const float* h = w.h.data();
  const float* part = w.part.data();
  const unsigned int* counters = w.counters.data();
  w.size_persistent(3, 16, 2, 7, false);
  EXPECT_EQ(w.h.data(), h);
  EXPECT_EQ(w.part.data(), part);
  EXPECT_EQ(w.counters.data(), counters);
}

TEST(RolloutWorkspace, ReallocatesWhatAChangedSizeTouches) {
  Workspace w;
  w.size_persistent(3, 16, 2, 7, false);
  const float* part = w.part.data();
  const unsigned int* counters = w.counters.data();
  // More units and reset Before: h and rh change; the head sums and counters keep their memory.
  w.size_persistent(3, 32, 2, 7, true);
  expect_extents(w, 3, 32, 2, 7, 32);
  EXPECT_EQ(w.part.data(), part);
  EXPECT_EQ(w.counters.data(), counters);
  // More paths: every buffer follows.
  w.size_persistent(5, 32, 4, 7, true);
  expect_extents(w, 5, 32, 4, 7, 32);
}

}  // namespace
