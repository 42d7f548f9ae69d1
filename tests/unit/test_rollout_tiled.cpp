// The tiled rollout (kernels/ensemble_rollout_tiled.hpp) against the team-per-path ensemble_rollout
// (itself checked against a plain host loop in test_rollout.cpp) on the same random draws: partial
// tiles, both reset modes and feature updates, tiles of 1, 4 and 16 scenarios (the CPU and GPU
// choices of rollout_tile_rows).
// Results must not depend on the team size, and must be bit-identical on Serial and OpenMP.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <random>
#include <vector>

#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_tiled.hpp"
#include "test_rollout_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::FeatureUpdate;
using hpt::GruReset;
using hpt::test::all_outputs;
using hpt::test::Problem;

struct Case {
  int E, N, H, I, S, Y;
  FeatureUpdate mode;
  GruReset reset;
};

const std::vector<Case> kCases = {
    {2, 3, 32, 64, 4, 20, FeatureUpdate::Rich, GruReset::After},
    {2, 19, 40, 5, 6, 15, FeatureUpdate::LossOnly, GruReset::Before},  // a tile of 16 and one of 3
    {3, 33, 24, 64, 8, 12, FeatureUpdate::Rich, GruReset::Before},
    {2, 40, 64, 64, 32, 8, FeatureUpdate::Rich, GruReset::After},
    {1, 1, 7, 1, 1, 9, FeatureUpdate::LossOnly, GruReset::After},
};

template <int R, class Space, class Real, class Mem>
std::vector<std::vector<double>> tiled(const Problem<Real, Mem>& pb, GruReset reset,
                                       const hpt::RolloutSettings& settings) {
  return all_outputs(
      hpt::test::run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        hpt::ensemble_rollout_tiled<R>(Space(), pb.params, reset, pb.h0, pb.in, settings, out);
      }));
}

template <class Space, class Real, class Mem>
std::vector<std::vector<double>> team_per_path(const Problem<Real, Mem>& pb, GruReset reset,
                                               const hpt::RolloutSettings& settings) {
  return all_outputs(
      hpt::test::run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        hpt::ensemble_rollout(Space(), pb.params, reset, pb.h0, pb.in, settings, out);
      }));
}

hpt::RolloutSettings settings_for(const Case& c) {
  return hpt::test::case_settings(c.Y, c.N, std::uint64_t(77 + c.N), c.mode);
}

template <class T>
class RolloutTiled : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutTiled, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RolloutTiled, MatchesTeamPerPathKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(2718);
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "E=" << c.E << " N=" << c.N << " H=" << c.H << " I=" << c.I
                                      << " S=" << c.S << " Y=" << c.Y << " reset=" << int(c.reset));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    const auto settings = settings_for(c);
    const auto reference = team_per_path<Space>(pb, c.reset, settings);
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I);
    hpt::test::expect_outputs_near(tiled<1, Space>(pb, c.reset, settings), reference, tol);
    hpt::test::expect_outputs_near(tiled<4, Space>(pb, c.reset, settings), reference, tol);
    hpt::test::expect_outputs_near(tiled<16, Space>(pb, c.reset, settings), reference, tol);
  }
}

// Each value has one owner thread and a fixed summation order: any team size gives the same bits.
TYPED_TEST(RolloutTiled, TeamSizeDoesNotChangeResults) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(99);
  const Case c{2, 21, 48, 64, 8, 10, FeatureUpdate::Rich, GruReset::After};
  const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
  auto settings = settings_for(c);
  constexpr int R = hpt::rollout_tile_rows<Space>();
  const auto chosen = tiled<R, Space>(pb, c.reset, settings);
  for (const int team_size : {1, 3, 32}) {
    settings.team_size = team_size;
    const auto out = tiled<R, Space>(pb, c.reset, settings);
    for (int o = 0; o < 4; ++o)
      EXPECT_EQ(out[o], chosen[o]) << hpt::test::kOutputNames[o] << " team_size " << team_size;
  }
}

// The dispatcher runs a tiled kernel on the host, tiles of rollout_tile_rows from that many
// scenarios on.
TYPED_TEST(RolloutTiled, DispatcherChoosesByScenarios) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  if (hpt::detail::team_vector_length<Space>() > 1) return;  // GPU rules: test_rollout_persistent
  EXPECT_EQ((hpt::choose_rollout_kernel<Space, Real>(5, 1, 256, 64, 32)),
            hpt::RolloutKernel::Tiled);
  EXPECT_EQ((hpt::choose_rollout_kernel<Space, Real>(5, hpt::rollout_tile_rows<Space>() - 1, 256,
                                                     64, 32)),
            hpt::RolloutKernel::Tiled);
  EXPECT_EQ(
      (hpt::choose_rollout_kernel<Space, Real>(5, hpt::rollout_tile_rows<Space>(), 256, 64, 32)),
      hpt::RolloutKernel::TiledWide);
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
// Same seed, same bits on Serial and OpenMP (every thread count: each value has one owner).
template <class Real>
void expect_serial_equals_openmp() {
  std::mt19937 gen(5);
  const Case c{3, 18, 32, 64, 4, 12, FeatureUpdate::Rich, GruReset::After};
  const Problem<Real, Kokkos::HostSpace> pb(c.E, c.H, c.S, c.I, gen);
  const auto settings = settings_for(c);
  const auto serial = tiled<4, Kokkos::Serial>(pb, c.reset, settings);
  const auto openmp = tiled<4, Kokkos::OpenMP>(pb, c.reset, settings);
  for (int o = 0; o < 4; ++o) EXPECT_EQ(openmp[o], serial[o]) << hpt::test::kOutputNames[o];
  const auto serial1 = tiled<1, Kokkos::Serial>(pb, c.reset, settings);
  const auto openmp1 = tiled<1, Kokkos::OpenMP>(pb, c.reset, settings);
  for (int o = 0; o < 4; ++o) EXPECT_EQ(openmp1[o], serial1[o]) << hpt::test::kOutputNames[o];
}

TEST(RolloutTiledHost, SerialEqualsOpenMPFloat) {
  expect_serial_equals_openmp<float>();
}
TEST(RolloutTiledHost, SerialEqualsOpenMPDouble) {
  expect_serial_equals_openmp<double>();
}
#endif

}  // namespace
