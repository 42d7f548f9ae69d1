// The persistent rollout (kernels/ensemble_rollout_persistent.hpp) against the team-per-path
// ensemble_rollout (itself checked against a host reference in test_rollout.cpp) on the same draws,
// and the dispatcher: where the persistent kernel is supported (CUDA, small enough) it must agree
// with ensemble_rollout within the precision's tolerance and be bit-reproducible; elsewhere
// ensemble_rollout_auto must fall back to a kernel that agrees within the same tolerance (the tiled
// kernel has its own tests in test_rollout_tiled.cpp).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_persistent.hpp"
#include "test_rollout_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::FeatureUpdate;
using hpt::GruReset;
using hpt::test::all_outputs;
using hpt::test::case_label;
using hpt::test::kOutputNames;
using hpt::test::Problem;

enum class Kernel { Existing, Persistent, Auto };

template <class Space, class Real, class Mem>
hpt::RolloutOutputs<Real, Mem> run(Kernel kernel, const Problem<Real, Mem>& pb, GruReset reset,
                                   const hpt::RolloutSettings& settings) {
  return hpt::test::run_rollout<Space>(
      pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        const Space space;
        if (kernel == Kernel::Existing)
          hpt::ensemble_rollout(space, pb.params, reset, pb.h0, pb.in, settings, out);
        else if (kernel == Kernel::Persistent)
          hpt::ensemble_rollout_persistent(space, pb.params, reset, pb.h0, pb.in, settings, out);
        else
          hpt::ensemble_rollout_auto(space, pb.params, reset, pb.h0, pb.in, settings, out);
      });
}

struct Case {
  int E, N, H, I, S, Y;
  FeatureUpdate mode;
  GruReset reset;
  bool fits_any_gpu;  // few paths and small H: supported on every CUDA GPU
  bool fits_no_gpu;   // more paths than any GPU has multiprocessors / 2
};

const std::vector<Case> kCases = {
    {2, 3, 32, 64, 4, 20, FeatureUpdate::Rich, GruReset::After, true, false},
    {2, 2, 40, 5, 6, 15, FeatureUpdate::LossOnly, GruReset::Before, true, false},
    // 100 units over teams of 3: the last team holds a single unit.
    {3, 1, 100, 64, 8, 12, FeatureUpdate::Rich, GruReset::Before, true, false},
    // The `small` bench size (on an H100 or H200 wholly resident in float, partly in double).
    {5, 1, 256, 64, 32, 10, FeatureUpdate::Rich, GruReset::After, false, false},
    {4, 100, 16, 64, 4, 6, FeatureUpdate::Rich, GruReset::After, false, true},
};

// Runs on CUDA only (the persistent kernel's only backend); true there.
template <class Space>
constexpr bool on_cuda() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

hpt::RolloutSettings settings_of(const Case& c) {
  return hpt::test::case_settings(c.Y, c.N, std::uint64_t(1000 + c.H), c.mode);
}

template <class T>
class RolloutPersistent : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutPersistent, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RolloutPersistent, DispatcherMatchesExistingKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  constexpr bool gpu = on_cuda<Space>();
  std::mt19937 gen(314);
  for (const auto& c : kCases) {
    SCOPED_TRACE(case_label(c));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    const auto settings = settings_of(c);
    const bool supported = hpt::persistent_rollout_supported<Space, Real>(c.E, c.N, c.H, c.I, c.S);
    if (!gpu || c.fits_no_gpu) {
      EXPECT_FALSE(supported);
    }
    if (gpu && c.fits_any_gpu) {
      EXPECT_TRUE(supported);
    }

    const auto existing = all_outputs(run<Space>(Kernel::Existing, pb, c.reset, settings));
    const auto chosen = all_outputs(run<Space>(Kernel::Auto, pb, c.reset, settings));
    // Against the existing kernel: only the summation order differs; errors compound per step.
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I);
    hpt::test::expect_outputs_near(chosen, existing, tol);
    if (!supported) continue;
    const auto persistent = all_outputs(run<Space>(Kernel::Persistent, pb, c.reset, settings));
    // Same kernel twice: bit-identical (a race between teams would show here).
    for (int o = 0; o < 4; ++o) EXPECT_EQ(chosen[o], persistent[o]) << kOutputNames[o];
  }
}

// One workspace kept over calls of different sizes (A, B, A again: its buffers reallocated at each
// change): every call's outputs bit-identical to a call with buffers of its own.
TYPED_TEST(RolloutPersistent, AKeptWorkspaceGivesTheOutputsOfFreshBuffers) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  if (!on_cuda<Space>()) GTEST_SKIP() << "the persistent kernel runs on CUDA only";
  std::mt19937 gen(99);
  hpt::RolloutWorkspace<Real, Mem> workspace;
  for (const int i : {0, 1, 0, 2}) {
    const Case& c = kCases[std::size_t(i)];
    SCOPED_TRACE(case_label(c));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    const auto settings = settings_of(c);
    const auto fresh = all_outputs(run<Space>(Kernel::Persistent, pb, c.reset, settings));
    const auto kept = all_outputs(
        hpt::test::run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
          hpt::ensemble_rollout_persistent(Space(), pb.params, c.reset, pb.h0, pb.in, settings, out,
                                           0, &workspace);
        }));
    for (int o = 0; o < 4; ++o) EXPECT_EQ(kept[o], fresh[o]) << kOutputNames[o];
  }
}

// Scratch capped so that only R of a team's weight rows stay on chip (R = 0, 1, about half): the
// rows read from global memory every step give the same outputs as ensemble_rollout.
TYPED_TEST(RolloutPersistent, PartlyResidentMatchesExistingKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  if (!on_cuda<Space>()) GTEST_SKIP() << "the persistent kernel runs on CUDA only";
  std::mt19937 gen(271);
  for (const auto& c : kCases) {
    const auto whole = hpt::plan_persistent_rollout<Space, Real>(c.E, c.N, c.H, c.I, c.S);
    if (!whole.supported) continue;
    SCOPED_TRACE(::testing::Message()
                 << "E=" << c.E << " N=" << c.N << " H=" << c.H << " reset=" << int(c.reset));
    const Problem<Real, Mem> pb(c.E, c.H, c.S, c.I, gen);
    const auto settings = settings_of(c);
    const auto existing = all_outputs(run<Space>(Kernel::Existing, pb, c.reset, settings));
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I);
    for (const int R : {0, 1, whole.rows_in_scratch / 2}) {
      SCOPED_TRACE(::testing::Message() << "rows in scratch " << R);
      const std::size_t cap =
          hpt::detail::persistent_scratch_bytes<Real>(c.H, c.I, c.S, whole.units_per_team, R);
      const auto plan = hpt::plan_persistent_rollout<Space, Real>(c.E, c.N, c.H, c.I, c.S, cap);
      ASSERT_TRUE(plan.supported);
      EXPECT_EQ(plan.rows_in_scratch, R);
      const auto partly = all_outputs(hpt::test::run_rollout<Space>(
          pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
            hpt::ensemble_rollout_persistent(Space(), pb.params, c.reset, pb.h0, pb.in, settings,
                                             out, cap);
          }));
      hpt::test::expect_outputs_near(partly, existing, tol);
    }
  }
}

// The `wide` bench size (H = 1024): its weight slices do not fit scratch whole, so the dispatcher
// picks the persistent kernel with part of the rows in global memory, and it agrees with
// ensemble_rollout for both GRU conventions.
TYPED_TEST(RolloutPersistent, WideSizeRunsPartlyResident) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  if (!on_cuda<Space>()) GTEST_SKIP() << "the persistent kernel runs on CUDA only";
  const int E = 5, N = 1, H = 1024, I = 64, S = 32;
  const auto plan = hpt::plan_persistent_rollout<Space, Real>(E, N, H, I, S);
  ASSERT_TRUE(plan.supported);
  EXPECT_LT(plan.rows_in_scratch, 3 * plan.units_per_team);
  EXPECT_EQ((hpt::choose_rollout_kernel<Space, Real>(E, N, H, I, S)),
            hpt::RolloutKernel::Persistent);
  std::mt19937 gen(1024);
  const Problem<Real, Mem> pb(E, H, S, I, gen);
  for (const GruReset reset : {GruReset::After, GruReset::Before}) {
    SCOPED_TRACE(::testing::Message() << "reset=" << int(reset));
    const Case c{E, N, H, I, S, 12, FeatureUpdate::Rich, reset, false, false};
    const auto settings = settings_of(c);
    const auto existing = all_outputs(run<Space>(Kernel::Existing, pb, reset, settings));
    const auto chosen = all_outputs(run<Space>(Kernel::Auto, pb, reset, settings));
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(H + I);
    hpt::test::expect_outputs_near(chosen, existing, tol);
    const auto again = all_outputs(run<Space>(Kernel::Persistent, pb, reset, settings));
    for (int o = 0; o < 4; ++o) EXPECT_EQ(chosen[o], again[o]) << kOutputNames[o];
  }
}

// Horizon 0: the current loss and h0 come back unchanged from whichever kernel the dispatcher
// picks.
TYPED_TEST(RolloutPersistent, ZeroHorizon) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(8);
  const Problem<Real, Mem> pb(2, 24, 4, 64, gen);
  hpt::RolloutSettings settings;
  settings.horizon = 0;
  settings.scenarios = 2;
  const auto out = all_outputs(run<Space>(Kernel::Auto, pb, GruReset::After, settings));
  const auto h0 = hpt::test::download(pb.h0);
  const auto state = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.in.loss_states);
  for (const double L : out[0]) EXPECT_EQ(L, double(Real(std::exp(state(1).log_loss))));
  ASSERT_EQ(out[1].size(), 2 * h0.size());
  for (std::size_t i = 0; i < out[1].size(); ++i) EXPECT_EQ(out[1][i], h0[i % h0.size()]);
}

// Called directly where it is not supported, the persistent kernel refuses instead of hanging.
TYPED_TEST(RolloutPersistent, RefusesUnsupportedSizes) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  std::mt19937 gen(9);
  const int E = 4, N = 100, H = 16, S = 4, I = 64;
  ASSERT_FALSE((hpt::persistent_rollout_supported<Space, Real>(E, N, H, I, S)));
  const Problem<Real, Mem> pb(E, H, S, I, gen);
  hpt::RolloutSettings settings;
  settings.horizon = 3;
  settings.scenarios = N;
  hpt::RolloutOutputs<Real, Mem> out(N, E, H, settings.horizon);
  EXPECT_THROW(hpt::ensemble_rollout_persistent(Space(), pb.params, GruReset::After, pb.h0, pb.in,
                                                settings, out),
               hpt::InternalError);
}

}  // namespace
