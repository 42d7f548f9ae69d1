// The tiled rollout (kernels/ensemble_rollout_tiled.hpp) against the team-per-path ensemble_rollout
// (itself checked against a plain host loop in test_rollout.cpp) on the same random draws: partial
// tiles, both reset modes and feature updates, tiles of 1, 4, 16 and 20 scenarios (the CPU and GPU
// choices of rollout_tile_rows), and the GPU's register blocks (20 rows x 1 unit per thread in
// float, 10 x 2 as before, heads 4 rows x 2 columns) run on every backend, with partial tiles and
// H not a multiple of the block.
// Results must not depend on the team size, and must be bit-identical on Serial and OpenMP. The
// kernel sums W x0 of the columns of x that stay constant along a path once per member: those
// columns (advance_loss_features' premise) and that sum are checked on their own.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_tiled.hpp"
#include "kernels/rich_features.hpp"
#include "kernels/rollout_features.hpp"
#include "kernels/rollout_path_features.hpp"
#include "test_rollout_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::FeatureUpdate;
using hpt::GruReset;
using hpt::test::all_outputs;
using hpt::test::case_label;
using hpt::test::Problem;

using Case = hpt::test::RolloutCase;

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

// With explicit register blocks: RB rows x UB units per thread, heads RBH rows x HU columns, the
// weights read a column ahead into registers (PF, the GPU's form) or in place.
template <int R, int RB, int UB, int RBH, bool PF, int HU, class Space, class Real, class Mem>
std::vector<std::vector<double>> tiled_blocked(const Problem<Real, Mem>& pb, GruReset reset,
                                               const hpt::RolloutSettings& settings) {
  return all_outputs(
      hpt::test::run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        hpt::ensemble_rollout_tiled<R, Space, Real, RB, UB, RBH, PF, HU>(
            Space(), pb.params, reset, pb.h0, pb.in, settings, out);
      }));
}

hpt::RolloutSettings settings_for(const Case& c) {
  return hpt::test::case_settings(c.Y, c.N, std::uint64_t(77 + c.N), c.mode);
}

template <class T>
class RolloutTiled : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutTiled, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

// Calls check(pb, reset, settings, reference, tol) for case c: a random problem, its settings, the
// team-per-path kernel's outputs and the tolerance against them.
template <class Space, class Real, class Check>
void against_team_per_path(std::mt19937& gen, const Case& c, const Check& check) {
  const Problem<Real, typename Space::memory_space> pb(c.E, c.H, c.S, c.I, gen);
  const auto settings = settings_for(c);
  const auto reference = hpt::test::team_per_path_outputs<Space>(pb, c.reset, settings);
  check(pb, c.reset, settings, reference, 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I));
}

// The same for every case of kCases.
template <class Space, class Real, class Check>
void against_team_per_path(unsigned seed, const Check& check) {
  std::mt19937 gen(seed);
  for (const auto& c : kCases) {
    SCOPED_TRACE(case_label(c));
    against_team_per_path<Space, Real>(gen, c, check);
  }
}

TYPED_TEST(RolloutTiled, MatchesTeamPerPathKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  against_team_per_path<Space, Real>(2718, [](const auto& pb, GruReset reset, const auto& settings,
                                              const auto& reference, double tol) {
    hpt::test::expect_outputs_near(tiled<1, Space>(pb, reset, settings), reference, tol);
    hpt::test::expect_outputs_near(tiled<4, Space>(pb, reset, settings), reference, tol);
    hpt::test::expect_outputs_near(tiled<16, Space>(pb, reset, settings), reference, tol);
    hpt::test::expect_outputs_near(tiled<20, Space>(pb, reset, settings), reference, tol);
  });
}

// The GPU's blocks on every backend: tiles of 20 rows as one group of 20 x 1 unit (float) and two
// groups of 10 x 2 units (N = 3, 19, 33, 40: one partial tile, one and a partial, two whole; H = 7:
// an odd unit padded), heads of 4 rows x one column pair, weights read ahead; also tiles of 16 as
// 2 x 8 and 5 as 5 x 1 (heads 1 row), the GPU's blocks with the weights read in place, and heads
// of 4 or 5 rows x two column pairs (the GPU's heads). A block changes only who computes a value,
// not its order of operations: same bits as the backend's own blocks.
TYPED_TEST(RolloutTiled, RegisterBlocksMatch) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  against_team_per_path<Space, Real>(1414, [](const auto& pb, GruReset reset, const auto& settings,
                                              const auto& reference, double tol) {
    const auto b20 = tiled_blocked<20, 20, 1, 4, true, 2, Space>(pb, reset, settings);
    hpt::test::expect_outputs_near(b20, reference, tol);
    const auto b10 = tiled_blocked<20, 10, 2, 4, true, 2, Space>(pb, reset, settings);
    hpt::test::expect_outputs_near(b10, reference, tol);
    hpt::test::expect_outputs_near(tiled_blocked<16, 8, 2, 4, true, 2, Space>(pb, reset, settings),
                                   reference, tol);
    hpt::test::expect_outputs_near(tiled_blocked<5, 5, 4, 1, true, 2, Space>(pb, reset, settings),
                                   reference, tol);
    const auto own20 = tiled<20, Space>(pb, reset, settings);
    const auto in_place = tiled_blocked<20, 20, 1, 4, false, 2, Space>(pb, reset, settings);
    const auto heads4 = tiled_blocked<20, 20, 1, 4, true, 4, Space>(pb, reset, settings);
    const auto heads4x5 = tiled_blocked<20, 20, 1, 5, true, 4, Space>(pb, reset, settings);
    for (int o = 0; o < 4; ++o) {
      EXPECT_EQ(b20[o], own20[o]) << hpt::test::kOutputNames[o];
      EXPECT_EQ(b10[o], own20[o]) << hpt::test::kOutputNames[o] << " (10 x 2)";
      EXPECT_EQ(in_place[o], own20[o]) << hpt::test::kOutputNames[o] << " (in place)";
      EXPECT_EQ(heads4[o], own20[o]) << hpt::test::kOutputNames[o] << " (heads 4 x 4)";
      EXPECT_EQ(heads4x5[o], own20[o]) << hpt::test::kOutputNames[o] << " (heads 5 x 4)";
    }
  });
}

// One work item per thread or several give the same bits (from 2 threads a team has one item per
// thread here: H = 3 is 2 blocks of 2 units, a tile of 4 rows one group; host teams are limited to
// the thread pool). A tile this small swaps its two h buffers; where they do not fit, the new h
// waits in registers or goes through scratch: NewHiddenSwappedOrKept.
TYPED_TEST(RolloutTiled, NewHiddenWithOneOrManyItemsPerThread) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 gen(31);
  const Case c{2, 7, 3, 64, 2, 11, FeatureUpdate::Rich, GruReset::After};
  against_team_per_path<Space, Real>(
      gen, c,
      [](const auto& pb, GruReset reset, const auto& chosen, const auto& reference, double tol) {
        auto settings = chosen;
        settings.team_size = 1;
        const auto one = tiled_blocked<4, 4, 2, 2, true, 2, Space>(pb, reset, settings);
        hpt::test::expect_outputs_near(one, reference, tol);
        for (const int team_size : {2, 4, 8}) {
          settings.team_size = team_size;
          const auto out = tiled_blocked<4, 4, 2, 2, true, 2, Space>(pb, reset, settings);
          for (int o = 0; o < 4; ++o)
            EXPECT_EQ(out[o], one[o]) << hpt::test::kOutputNames[o] << " team_size " << team_size;
        }
      });
}

// With reset After the new h goes to a second scratch buffer where that fits level 0 (tiles of 4
// here), else it waits in registers (a GPU's tile of 20 at H = 256: one item per thread) or goes
// through scratch (a host's: its level 0 is 32 KB). Both against the team-per-path kernel: tiles
// of different sizes are not bit for bit equal in float on a host even where neither swaps (seen
// at H = 1024 with tiles of 4 and 20), so the two paths are not compared bit for bit.
TYPED_TEST(RolloutTiled, NewHiddenSwappedOrKept) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 gen(57);
  const Case c{2, 21, 256, 64, 8, 3, FeatureUpdate::Rich, GruReset::After};
  against_team_per_path<Space, Real>(
      gen, c,
      [](const auto& pb, GruReset reset, const auto& settings, const auto& reference, double tol) {
        // A tile of 4 swaps its h buffers; one of 20 does not (they exceed level 0).
        hpt::test::expect_outputs_near(tiled<4, Space>(pb, reset, settings), reference, tol);
        hpt::test::expect_outputs_near(tiled<20, Space>(pb, reset, settings), reference, tol);
      });
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

// The tiled weights hold, per member, W x0 over the columns of x that stay constant along a path
// (a host sum in double, within the precision's rounding) and the weights of the changing columns
// in their slots: a wrong precomputed part fails here, and in MatchesTeamPerPathKernel.
TYPED_TEST(RolloutTiled, WeightsHoldTheConstantInputsProduct) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(31);
  for (const auto& c : kCases) {
    SCOPED_TRACE(case_label(c));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    const auto tw =
        hpt::detail::make_tiled_weights<Space, Real>(Space(), pb.params, pb.in.x0, c.mode);
    const auto gru = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tw.gru);
    const auto xw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tw.xw);
    const auto w_ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.params.gru.w_ih);
    const auto w_hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.params.gru.w_hh);
    const auto x0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.in.x0);
    const int V = hpt::detail::path_feature_count(c.mode);
    ASSERT_EQ(tw.V, V);
    int constant = 0;
    for (int col = 0; col < c.I; ++col) constant += hpt::detail::path_feature_constant(c.mode, col);
    EXPECT_EQ(constant, c.I - V);
    for (int m = 0; m < c.E; ++m)
      for (int g = 0; g < 3; ++g)
        for (int j = 0; j < tw.Hp; ++j) {
          const int q = g * tw.Hp + j;
          double sum = 0, size = 0;
          if (j < c.H)
            for (int col = 0; col < c.I; ++col)
              if (hpt::detail::path_feature_constant(c.mode, col)) {
                sum += double(w_ih(m, g * c.H + j, col)) * double(x0(col));
                size += std::fabs(double(w_ih(m, g * c.H + j, col)) * double(x0(col)));
              }
          EXPECT_LE(std::fabs(double(xw(m, q)) - sum),
                    hpt::test::tolerance<Real>(c.I) * std::fmax(1.0, size))
              << "member " << m << " gate " << g << " unit " << j;
          for (int k = 0; k < V + c.H; ++k) {
            const Real want = j >= c.H ? Real(0)
                              : k < V  ? w_ih(m, g * c.H + j, hpt::detail::path_feature_column(k))
                                       : w_hh(m, g * c.H + j, k - V);
            EXPECT_EQ(gru(m, k, q), want) << "member " << m << " column " << k << " unit " << q;
          }
        }
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

// The premise of the tiled kernel's constant inputs (rollout_path_features.hpp): along a path,
// advance_loss_features writes exactly the columns path_feature_column(0 ..
// path_feature_count(mode)
// - 1) of x in either mode, and no other; the slots number those columns in ascending order.
TEST(RolloutPathFeatures, AreTheColumnsAdvanceLossFeaturesWrites) {
  const int I = hpt::rich::kCount;
  for (int k = 0; k < hpt::detail::path_feature_count(FeatureUpdate::Rich); ++k) {
    EXPECT_EQ(hpt::detail::path_feature_slot(hpt::detail::path_feature_column(k)), k);
    if (k > 0) {
      EXPECT_LT(hpt::detail::path_feature_column(k - 1), hpt::detail::path_feature_column(k));
    }
  }
  EXPECT_EQ(hpt::detail::path_feature_column(0), 0);  // LossOnly's x[0]
  hpt::View1<double, Kokkos::HostSpace> mean("mean", I), inv_std("inv_std", I), x("x", I);
  std::mt19937 gen(8);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  for (int i = 0; i < I; ++i) mean(i) = u(gen), inv_std(i) = 1.5 + u(gen);
  for (const FeatureUpdate mode : {FeatureUpdate::LossOnly, FeatureUpdate::Rich}) {
    hpt::LossState<double> st{};
    st.log_loss = st.ema4 = st.ema16 = st.ema64 = st.best = st.first = st.mean32 = -0.1;
    st.std32 = 0.05;
    st.count = 1;
    st.window[hpt::kLossWindow - 1] = st.log_loss;
    for (int step = 0; step < 3 * hpt::kLossWindow; ++step) {
      const double sentinel = 1e30;  // no feature can take it (clamped, or exp of a small l)
      Kokkos::deep_copy(x, sentinel);
      hpt::detail::advance_loss_features(st, u(gen), mode, x, mean, inv_std, 10.0);
      for (int c = 0; c < I; ++c)
        EXPECT_EQ(x(c) != sentinel, !hpt::detail::path_feature_constant(mode, c))
            << "column " << c << " step " << step << " mode " << int(mode);
    }
  }
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
