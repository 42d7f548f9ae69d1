// The persistent rollout's split (kernels/ensemble_rollout_persistent_plan.hpp), checked as
// arithmetic on the host: the kernel itself runs only on CUDA (test_rollout_persistent.cpp).
// Machine figures: an H100 or H200 has 132 multiprocessors; Kokkos 3.4 caps level-0 team scratch
// at 40 KB, later versions allow up to the hardware's 227 KB.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstddef>

#include "kernels/ensemble_rollout_persistent_plan.hpp"

namespace {

constexpr long kSms = 132;
constexpr std::size_t kScratch34 = 40 * 1024;
constexpr std::size_t kScratchH100 = 227 * 1024;

struct Size {
  int E, N, H, I, S;
};
constexpr Size kSmall{5, 1, 256, 64, 32};
constexpr Size kPrototype{3, 1, 256, 64, 32};
constexpr Size kWide{5, 1, 1024, 64, 32};
constexpr Size kBatch{5, 1024, 256, 64, 32};

template <class Real>
hpt::PersistentRolloutPlan split(const Size& s, long sms, std::size_t scratch) {
  return hpt::split_persistent_rollout<Real>(s.E, s.N, s.H, s.I, s.S, sms, scratch);
}

// What every supported plan must satisfy: co-residency, all units covered, scratch within bounds
// and as many rows resident as fit.
template <class Real>
void expect_valid(const hpt::PersistentRolloutPlan& plan, const Size& s, long sms,
                  std::size_t scratch) {
  ASSERT_TRUE(plan.supported);
  EXPECT_GE(plan.teams_per_path, 2);
  EXPECT_LE(long(s.N) * s.E * plan.teams_per_path, sms);
  EXPECT_GE(plan.teams_per_path * plan.units_per_team, s.H);
  EXPECT_LT((plan.teams_per_path - 1) * plan.units_per_team, s.H);
  EXPECT_GE(plan.rows_in_scratch, 0);
  EXPECT_LE(plan.rows_in_scratch, 3 * plan.units_per_team);
  EXPECT_EQ(plan.scratch_bytes, (hpt::detail::persistent_scratch_bytes<Real>(
                                    s.H, s.I, s.S, plan.units_per_team, plan.rows_in_scratch)));
  EXPECT_LE(plan.scratch_bytes, scratch);
  if (plan.rows_in_scratch < 3 * plan.units_per_team) {
    EXPECT_GT((hpt::detail::persistent_scratch_bytes<Real>(s.H, s.I, s.S, plan.units_per_team,
                                                           plan.rows_in_scratch + 1)),
              scratch);
  }
}

TEST(PersistentRolloutPlan, WideKeepsPartOfItsRowsInScratch) {
  for (const std::size_t scratch : {kScratch34, kScratchH100}) {
    SCOPED_TRACE(scratch);
    const auto plan = split<float>(kWide, kSms, scratch);
    expect_valid<float>(plan, kWide, kSms, scratch);
    EXPECT_EQ(plan.teams_per_path, 26);
    EXPECT_EQ(plan.units_per_team, 40);
    EXPECT_GT(plan.rows_in_scratch, 0);
    EXPECT_LT(plan.rows_in_scratch, 3 * plan.units_per_team);
  }
  // 227 KB holds about 52 rows of 1088 floats; 40 KB about 8.
  EXPECT_GT(split<float>(kWide, kSms, kScratchH100).rows_in_scratch,
            5 * split<float>(kWide, kSms, kScratch34).rows_in_scratch);
  expect_valid<double>(split<double>(kWide, kSms, kScratch34), kWide, kSms, kScratch34);
}

// S = 32: 67 head values, 23 vector groups per team; H = 256 over 12 teams of 22 units, whatever
// the members (E 5 or 3), though the GPU has room for 26 or 44 teams per path. The 66 rows of a
// team fit Kokkos 4's scratch whole and Kokkos 3.4's in part.
TEST(PersistentRolloutPlan, SmallSizesTakeTheFewestTeamsTheirGroupsCover) {
  for (const Size& s : {kSmall, kPrototype}) {
    for (const std::size_t scratch : {kScratch34, kScratchH100}) {
      SCOPED_TRACE(::testing::Message() << "E=" << s.E << " scratch=" << scratch);
      const auto plan = split<float>(s, kSms, scratch);
      expect_valid<float>(plan, s, kSms, scratch);
      EXPECT_EQ(plan.teams_per_path, 12);
      EXPECT_EQ(plan.units_per_team, 22);
      if (scratch == kScratchH100) {
        EXPECT_EQ(plan.rows_in_scratch, 3 * plan.units_per_team);
      } else {
        EXPECT_LT(plan.rows_in_scratch, 3 * plan.units_per_team);
      }
    }
  }
  // Fewer multiprocessors than that per path: as many teams as fit.
  const auto crowded = split<float>(kSmall, 50, kScratchH100);
  expect_valid<float>(crowded, kSmall, 50, kScratchH100);
  EXPECT_EQ(crowded.teams_per_path, 10);
}

// Double at H = 256 did not fit 40 KB whole; it now runs partly resident.
TEST(PersistentRolloutPlan, DoubleSmallIsPartlyResidentIn40KB) {
  const auto plan = split<double>(kSmall, kSms, kScratch34);
  expect_valid<double>(plan, kSmall, kSms, kScratch34);
  EXPECT_LT(plan.rows_in_scratch, 3 * plan.units_per_team);
  const auto whole = split<double>(kSmall, kSms, kScratchH100);
  expect_valid<double>(whole, kSmall, kSms, kScratchH100);
  EXPECT_EQ(whole.rows_in_scratch, 3 * whole.units_per_team);
}

TEST(PersistentRolloutPlan, ScratchBelowTheVectorsIsUnsupported) {
  const auto wide = split<float>(kWide, kSms, kScratch34);
  const std::size_t vectors = hpt::detail::persistent_scratch_bytes<float>(
      kWide.H, kWide.I, kWide.S, wide.units_per_team, 0);
  EXPECT_FALSE(split<float>(kWide, kSms, vectors - 1).supported);
  const auto bare = split<float>(kWide, kSms, vectors);
  expect_valid<float>(bare, kWide, kSms, vectors);
  EXPECT_EQ(bare.rows_in_scratch, 0);
  EXPECT_FALSE(split<float>(kWide, kSms, 0).supported);
}

TEST(PersistentRolloutPlan, ManyPathsOrFewMultiprocessorsAreUnsupported) {
  EXPECT_FALSE(split<float>(kBatch, kSms, kScratchH100).supported);
  EXPECT_FALSE(split<float>(Size{4, 100, 16, 64, 4}, kSms, kScratchH100).supported);
  // Two teams per path need 2 N E multiprocessors.
  EXPECT_FALSE(split<float>(kSmall, 9, kScratchH100).supported);
  expect_valid<float>(split<float>(kSmall, 10, kScratchH100), kSmall, 10, kScratchH100);
  EXPECT_FALSE(split<float>(Size{0, 1, 256, 64, 32}, kSms, kScratchH100).supported);
  EXPECT_FALSE(split<float>(Size{5, 1, 1, 64, 32}, kSms, kScratchH100).supported);
}

// S = 3: 9 head values, 3 groups per team; H = 8 over 3 teams of 3 units (the last holds 2). With
// H no larger than the groups, still two teams (the least the kernel runs).
TEST(PersistentRolloutPlan, TinyHiddenGetsAsManyUnitsAsGroups) {
  const Size s{2, 1, 8, 5, 3};
  const auto plan = split<float>(s, kSms, kScratch34);
  expect_valid<float>(plan, s, kSms, kScratch34);
  EXPECT_EQ(plan.teams_per_path, 3);
  EXPECT_EQ(plan.units_per_team, 3);
  EXPECT_EQ(plan.rows_in_scratch, 9);
  const Size few{2, 1, 16, 5, 32};
  const auto two = split<float>(few, kSms, kScratch34);
  expect_valid<float>(two, few, kSms, kScratch34);
  EXPECT_EQ(two.teams_per_path, 2);
  EXPECT_EQ(two.units_per_team, 8);
}

// The units read through the caches fill at most the L2 share with their rows in global memory
// (one more unit would exceed it); units with a row in scratch are never streamed; with the L2
// unknown, or large enough, no unit is.
TEST(PersistentRolloutPlan, UnitsCachedFillAtMostTheL2Share) {
  const auto plan = split<float>(kWide, kSms, kScratch34);
  const long teams = long(kWide.N) * kWide.E * plan.teams_per_path;
  const double row_bytes = double(kWide.I + kWide.H) * sizeof(float);
  const double budget = hpt::kPersistentL2Share * double(std::size_t(50) << 20);  // H100, H200
  const int F =
      hpt::units_cached_in_l2<float>(plan, teams, kWide.H, kWide.I, std::size_t(50) << 20);
  EXPECT_GE(F, plan.rows_in_scratch);
  EXPECT_LT(F, plan.units_per_team);
  // A plain count of the rows in global memory of units [0, n).
  const auto global_rows = [&](int n) {
    long rows = 0;
    for (int g = 0; g < 3; ++g)
      for (int u = 0; u < n; ++u) rows += g * plan.units_per_team + u >= plan.rows_in_scratch;
    return rows;
  };
  for (int n = 0; n <= plan.units_per_team; ++n)
    EXPECT_EQ(hpt::global_rows_of_units(plan, n), global_rows(n)) << n;
  EXPECT_LE(double(teams) * double(global_rows(F)) * row_bytes, budget);
  EXPECT_GT(double(teams) * double(global_rows(F + 1)) * row_bytes, budget);
  EXPECT_EQ(hpt::units_cached_in_l2<float>(plan, teams, kWide.H, kWide.I, 0), plan.units_per_team);
  EXPECT_EQ(hpt::units_cached_in_l2<float>(plan, teams, kWide.H, kWide.I, std::size_t(1) << 40),
            plan.units_per_team);
  // A tiny L2: every unit without a row in scratch is streamed.
  EXPECT_EQ(hpt::units_cached_in_l2<float>(plan, teams, kWide.H, kWide.I, 1024),
            plan.rows_in_scratch);
}

// The host backends never run the persistent kernel (its barrier needs co-resident teams).
TEST(PersistentRolloutPlan, HostBackendsAreUnsupported) {
  EXPECT_FALSE((hpt::plan_persistent_rollout<Kokkos::DefaultHostExecutionSpace, float>(
                    kSmall.E, kSmall.N, kSmall.H, kSmall.I, kSmall.S)
                    .supported));
}

}  // namespace
