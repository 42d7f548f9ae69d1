// The matrix-product rollout (kernels/ensemble_rollout_gemm.hpp) against the team-per-path
// ensemble_rollout (itself checked against a plain host loop in test_rollout.cpp) on the same
// random draws: one and many scenarios (several blocks, a partial last one), H not a multiple of a
// vector, both feature updates, more prior units than one vectorised chunk, with
// the host's BLAS (where the build has it) and with KokkosBlas::gemm; the same bits on Serial and
// OpenMP; the dispatcher's choice; reset Before refused.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/host_blas.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_gemm.hpp"
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
    {1, 1, 7, 1, 1, 9, FeatureUpdate::LossOnly, GruReset::After},
    {3, 70, 20, 64, 8, 12, FeatureUpdate::Rich, GruReset::After},
    {2, 65, 64, 5, 32, 8, FeatureUpdate::LossOnly, GruReset::After},
    // Blocks of 48 scenarios and a last one of 12; the prior's units in two chunks.
    {2, 300, 24, 64, 40, 5, FeatureUpdate::Rich, GruReset::After},
};

template <class Space, class Real, class Mem>
std::vector<std::vector<double>> gemm_form(const Problem<Real, Mem>& pb,
                                           const hpt::RolloutSettings& settings, bool host_blas) {
  return all_outputs(
      hpt::test::run_rollout<Space>(pb, settings, [&](const hpt::RolloutOutputs<Real, Mem>& out) {
        hpt::ensemble_rollout_gemm(Space(), pb.params, GruReset::After, pb.h0, pb.in, settings, out,
                                   host_blas);
      }));
}

template <class T>
class RolloutGemm : public ::testing::Test {};
TYPED_TEST_SUITE(RolloutGemm, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RolloutGemm, MatchesTeamPerPathKernel) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 gen(4242);
  for (const auto& c : kCases) {
    SCOPED_TRACE(case_label(c));
    const Problem<Real, typename Space::memory_space> pb(c.E, c.H, c.S, c.I, gen);
    const auto settings = hpt::test::case_settings(c.Y, c.N, std::uint64_t(91 + c.N), c.mode);
    const auto reference = hpt::test::team_per_path_outputs<Space>(pb, c.reset, settings);
    // The float gates' exp, sigmoid and tanh carry up to 2e-7 each beyond the sums' rounding.
    const double tol = 4.0 * (c.Y + 1) * hpt::test::tolerance<Real>(c.H + c.I + 8);
    hpt::test::expect_outputs_near(gemm_form<Space>(pb, settings, true), reference, tol);
    hpt::test::expect_outputs_near(gemm_form<Space>(pb, settings, false), reference, tol);
  }
}

TYPED_TEST(RolloutGemm, RefusesResetBefore) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  std::mt19937 gen(3);
  const Problem<Real, typename Space::memory_space> pb(1, 8, 2, 4, gen);
  const auto settings = hpt::test::case_settings(3, 2, 1, FeatureUpdate::Rich);
  EXPECT_THROW(hpt::test::run_rollout<Space>(
                   pb, settings,
                   [&](const hpt::RolloutOutputs<Real, typename Space::memory_space>& out) {
                     hpt::ensemble_rollout_gemm(Space(), pb.params, GruReset::Before, pb.h0, pb.in,
                                                settings, out);
                   }),
               hpt::InternalError);
}

// On a CPU with the host's BLAS: the matrix-product form from kRolloutGemmScenarios scenarios on,
// reset After only; without the BLAS (or on a GPU) never.
TYPED_TEST(RolloutGemm, DispatcherChoosesIt) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  if (hpt::detail::team_vector_length<Space>() > 1) return;  // GPU rules: test_rollout_persistent
  const int N = hpt::kRolloutGemmScenarios;
  const auto choice = [](int n, GruReset reset) {
    return hpt::choose_rollout_kernel<Space, Real>(5, n, 256, 64, 32, reset);
  };
  EXPECT_EQ(choice(N - 1, GruReset::After), hpt::RolloutKernel::TiledWide);
  EXPECT_EQ(choice(N, GruReset::Before), hpt::RolloutKernel::TiledWide);
  EXPECT_EQ(choice(N, GruReset::After),
            hpt::host_blas_available() ? hpt::RolloutKernel::Gemm : hpt::RolloutKernel::TiledWide);
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
// Same seed, same bits on Serial and OpenMP: each value has one owner thread, and the BLAS runs
// the same products whichever space called it.
TEST(RolloutGemmHost, SerialEqualsOpenMP) {
  std::mt19937 gen(17);
  const Case c{3, 66, 40, 64, 8, 10, FeatureUpdate::Rich, GruReset::After};
  const Problem<float, Kokkos::HostSpace> pb(c.E, c.H, c.S, c.I, gen);
  const auto settings = hpt::test::case_settings(c.Y, c.N, 5, c.mode);
  for (const bool blas : {true, false}) {
    const auto serial = gemm_form<Kokkos::Serial>(pb, settings, blas);
    const auto openmp = gemm_form<Kokkos::OpenMP>(pb, settings, blas);
    for (int o = 0; o < 4; ++o) EXPECT_EQ(serial[o], openmp[o]) << hpt::test::kOutputNames[o];
  }
}
#endif

}  // namespace
