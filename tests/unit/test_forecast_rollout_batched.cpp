// The batched rollout of R runs (kernels/ensemble_rollout_batched.hpp) against the single-run
// team-per-path kernel run once per run with that run's seed (bit-identical paths), and the latent
// filter against gru_step on each run alone.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <limits>
#include <random>

#include "kernels/ensemble_rollout_batched.hpp"
#include "kernels/latent_filter.hpp"
#include "kernels/path_windows.hpp"
#include "test_rollout_support.hpp"

namespace {

using hpt::test::download;
using hpt::test::fill_random;

template <class T>
class ForecastBatched : public ::testing::Test {};
TYPED_TEST_SUITE(ForecastBatched, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(ForecastBatched, RolloutEqualsTheSingleRunKernelPerRun) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  for (const auto mode : {hpt::FeatureUpdate::Rich, hpt::FeatureUpdate::LossOnly}) {
    const int E = 3, H = 16, S = 4, I = 64, R = 4, N = 5, Y = 9;
    std::mt19937 gen(11);
    hpt::test::Problem<Real, Mem> pb(E, H, S, I, gen);
    hpt::BatchedRolloutInputs<Real, Mem> in;
    in.h0 = hpt::View3<Real, Mem>("h0", R, E, H);
    in.x0 = hpt::View2<Real, Mem>("x0", R, I);
    in.norm_mean = hpt::View2<Real, Mem>("mean", R, I);
    in.norm_inv_std = hpt::View2<Real, Mem>("inv_std", R, I);
    in.loss_states = hpt::View1<hpt::LossState<Real>, Mem>("states", R);
    in.active = hpt::View1<int, Mem>("active", R);
    fill_random(in.h0, gen, -0.8, 0.8);
    fill_random(in.x0, gen, -2.0, 2.0);
    fill_random(in.norm_mean, gen, -0.3, 0.3);
    fill_random(in.norm_inv_std, gen, 0.5, 3.0);
    auto states = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pb.in.loss_states);
    auto host_states = Kokkos::create_mirror_view(in.loss_states);
    auto host_active = Kokkos::create_mirror_view(in.active);
    for (int r = 0; r < R; ++r) {
      host_states(r) = states(1);
      host_states(r).log_loss += Real(0.1 * r);
      host_active(r) = r == 2 ? 0 : 1;  // run 2 has ended
    }
    Kokkos::deep_copy(in.loss_states, host_states);
    Kokkos::deep_copy(in.active, host_active);

    hpt::RolloutSettings settings;
    settings.horizon = Y;
    settings.scenarios = N;
    settings.seed = 99;
    settings.feature_update = mode;
    settings.clamp = 3.0;
    hpt::View4<Real, Mem> paths("paths", R, N, E, Y + 1);
    Kokkos::deep_copy(paths, std::numeric_limits<Real>::quiet_NaN());
    hpt::ensemble_rollout_batched(Space(), pb.params, hpt::GruReset::After, in, settings, paths);
    Space().fence();
    const auto got = download(paths);

    for (int r = 0; r < R; ++r) {
      SCOPED_TRACE(r);
      hpt::View2<Real, Mem> h0("h0_r", E, H);
      Kokkos::deep_copy(h0, Kokkos::subview(in.h0, r, Kokkos::ALL(), Kokkos::ALL()));
      hpt::RolloutInputs<Real, Mem> one;
      one.x0 = hpt::View1<Real, Mem>("x0_r", I);
      one.norm_mean = hpt::View1<Real, Mem>("mean_r", I);
      one.norm_inv_std = hpt::View1<Real, Mem>("inv_std_r", I);
      Kokkos::deep_copy(one.x0, Kokkos::subview(in.x0, r, Kokkos::ALL()));
      Kokkos::deep_copy(one.norm_mean, Kokkos::subview(in.norm_mean, r, Kokkos::ALL()));
      Kokkos::deep_copy(one.norm_inv_std, Kokkos::subview(in.norm_inv_std, r, Kokkos::ALL()));
      one.loss_states = in.loss_states;
      one.run = r;
      hpt::RolloutSettings s1 = settings;
      s1.seed = hpt::batched_rollout_seed(settings.seed, r);
      hpt::RolloutOutputs<Real, Mem> out(N, E, H, Y);
      hpt::ensemble_rollout(Space(), pb.params, hpt::GruReset::After, h0, one, s1, out);
      Space().fence();
      const auto want = download(out.loss_paths);
      const std::size_t per_run = std::size_t(N) * E * (Y + 1);
      for (std::size_t i = 0; i < per_run; ++i) {
        const double v = got[std::size_t(r) * per_run + i];
        if (r == 2)
          ASSERT_TRUE(std::isnan(v)) << "an inactive run's paths are not written";
        else
          ASSERT_EQ(v, want[i]) << "element " << i;
      }
    }
  }
}

TYPED_TEST(ForecastBatched, LatentFilterIsOneGruStepPerActiveRun) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int E = 2, H = 8, I = 64, R = 3;
  std::mt19937 gen(3);
  hpt::GruWeights<Real, Mem> w(E, H, I);
  fill_random(w.w_ih, gen, -0.3, 0.3);
  fill_random(w.w_hh, gen, -0.3, 0.3);
  fill_random(w.b_ih, gen, -0.3, 0.3);
  fill_random(w.b_hh, gen, -0.3, 0.3);
  hpt::View2<Real, Mem> features("features", R, I);
  hpt::View3<Real, Mem> latents("latents", R, E, H);
  hpt::View1<int, Mem> active("active", R);
  fill_random(features, gen, -1.0, 1.0);
  fill_random(latents, gen, -0.5, 0.5);
  auto ha = Kokkos::create_mirror_view(active);
  ha(0) = 1, ha(1) = 0, ha(2) = 1;
  Kokkos::deep_copy(active, ha);
  const auto before = download(latents);

  // Reference: gru_step on each run alone, its features repeated per member.
  std::vector<std::vector<double>> want(R);
  for (int r = 0; r < R; ++r) {
    hpt::View3<Real, Mem> x("x", 1, E, I), h("h", 1, E, H), out("out", 1, E, H);
    for (int m = 0; m < E; ++m)
      Kokkos::deep_copy(Kokkos::subview(x, 0, m, Kokkos::ALL()),
                        Kokkos::subview(features, r, Kokkos::ALL()));
    Kokkos::deep_copy(Kokkos::subview(h, 0, Kokkos::ALL(), Kokkos::ALL()),
                      Kokkos::subview(latents, r, Kokkos::ALL(), Kokkos::ALL()));
    hpt::gru_step(Space(), w, hpt::GruReset::After, x, h, out);
    Space().fence();
    want[std::size_t(r)] = download(out);
  }
  hpt::LatentFilterWork<Real, Mem> work(R, E, H, I);
  hpt::filter_latents(Space(), w, hpt::GruReset::After, features, active, latents, work);
  Space().fence();
  const auto got = download(latents);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < E * H; ++i) {
      const std::size_t at = std::size_t(r * E * H + i);
      if (r == 1)
        EXPECT_EQ(got[at], before[at]) << "inactive run changed";
      else
        EXPECT_EQ(got[at], want[std::size_t(r)][std::size_t(i)]) << "run " << r << " " << i;
    }
}

}  // namespace

namespace {

TYPED_TEST(ForecastBatched, WindowMeansAgainstAHostLoop) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  const int R = 2, N = 3, E = 2, Y = 20;
  const std::vector<int> hz{5, 12, 15};
  std::mt19937 gen(1);
  hpt::View4<Real, Mem> paths("paths", R, N, E, Y + 1);
  fill_random(paths, gen, 0.1, 2.0);
  hpt::View1<int, Mem> horizons("hz", 3), active("active", R);
  hpt::test::upload_values(horizons, {5, 12, 15});
  hpt::test::upload_values(active, {1, 1});
  hpt::View4<Real, Mem> out("out", R, N, E, 3);
  hpt::window_mean_paths(Space(), paths, horizons, hz, 4, 5, active, out);
  Space().fence();
  const auto p = download(paths);
  const auto got = download(out);
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < E; ++m)
        for (int j = 0; j < 3; ++j) {
          double sum = 0;
          for (int k = hz[std::size_t(j)] - 4; k <= hz[std::size_t(j)] + 5; ++k)
            sum += p[std::size_t(((r * N + n) * E + m) * (Y + 1) + k)];
          EXPECT_TRUE(hpt::test::near_rel(got[std::size_t(((r * N + n) * E + m) * 3 + j)], sum / 10,
                                          hpt::test::tolerance<Real>(10)));
        }
}

TYPED_TEST(ForecastBatched, AnOverflowingPathSaturatesItsWindow) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  hpt::View4<Real, Mem> paths("paths", 1, 1, 1, 11);
  Kokkos::deep_copy(paths, Real(1));
  Kokkos::deep_copy(Kokkos::subview(paths, 0, 0, 0, 7), std::numeric_limits<Real>::infinity());
  hpt::View1<int, Mem> horizons("hz", 1), active("active", 1);
  hpt::test::upload_values(horizons, {5});
  hpt::test::upload_values(active, {1});
  hpt::View4<Real, Mem> out("out", 1, 1, 1, 1);
  hpt::window_mean_paths(Space(), paths, horizons, {5}, 4, 5, active, out);
  const auto got = download(out);
  EXPECT_EQ(got[0], double(Real(hpt::kPathWindowMax)));
}

}  // namespace
