#include "forecast/curve_forecaster.hpp"

#include "core/launcher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "forecast/baselines.hpp"
#include "kernels/path_windows.hpp"

namespace hpt::forecast {

namespace {

// lat(r, m, j) = h0(m, j) for every run r (a launcher of its own: nvcc allows no extended lambda in
// a constructor).
HPT_LAUNCHER void broadcast_latents(const View3<real>& lat, const View2<real>& h0) {
  Kokkos::parallel_for(
      "hpt::forecast_latents_init",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>(
          {0, 0, 0}, {int(lat.extent(0)), int(lat.extent(1)), int(lat.extent(2))}),
      KOKKOS_LAMBDA(const int r, const int m, const int j) { lat(r, m, j) = h0(m, j); });
}

}  // namespace

RssmCurveForecaster::RssmCurveForecaster(RssmDynamics& dynamics, int runs, int scenarios,
                                         std::vector<int> horizons, std::uint64_t seed,
                                         FeatureUpdate feature_update, double clamp,
                                         const RssmTrainOptions& training, int train_runs)
    : dynamics_(dynamics),
      trainer_(dynamics.model(), dynamics.gru_reset(), training, runs),
      train_runs_(train_runs),
      runs_(runs),
      horizons_(std::move(horizons)) {
  HPT_REQUIRE(!horizons_.empty() && horizons_.front() >= kTargetBefore,
              "RssmCurveForecaster: horizons must be sorted and >= 4");
  const int E = dynamics.members(), H = dynamics.hidden(), K = int(horizons_.size());
  settings_.horizon = horizons_.back() + kTargetAfter;
  settings_.scenarios = scenarios;
  settings_.seed = seed;
  settings_.feature_update = feature_update;
  settings_.clamp = clamp;
  // Every run starts from the ensemble's latents.
  latents_ = View3<real>("hpt::forecast_latents", runs, E, H);
  broadcast_latents(latents_, dynamics.latents());
  filter_work_ = LatentFilterWork<real>(runs, E, H, dynamics.input());
  paths_ = View4<real>("hpt::forecast_paths", runs, scenarios, E, settings_.horizon + 1);
  windows_ = View4<real>("hpt::forecast_windows", runs, scenarios, E, K);
  horizons_device_ = View1<int>("hpt::forecast_horizons", K);
  auto hh = Kokkos::create_mirror_view(horizons_device_);
  for (int k = 0; k < K; ++k) hh(k) = horizons_[std::size_t(k)];
  Kokkos::deep_copy(horizons_device_, hh);
  stats_ = RolloutStatistics<real>(E, K - 1);
}

void RssmCurveForecaster::observe(const CurveState& state) {
  // The ring keeps the latents before the step; then the step is filtered in.
  trainer_.observe(state.active_host, state.features, state.log_loss, latents_);
  filter_latents(ExecSpace(), dynamics_.params().gru, dynamics_.gru_reset(), state.features,
                 state.active, latents_, filter_work_);
}

int RssmCurveForecaster::train() {
  return train_runs_ > 0 ? trainer_.train(train_runs_) : 0;
}

double RssmCurveForecaster::member_steps_per_forecast(int active_runs) const {
  return double(active_runs) * settings_.scenarios * dynamics_.members() * settings_.horizon;
}

CurveForecast RssmCurveForecaster::forecast(const CurveState& state) {
  BatchedRolloutInputs<real> in;
  in.h0 = latents_;
  in.x0 = state.features;
  in.loss_states = state.loss_states;
  in.norm_mean = state.norm_mean;
  in.norm_inv_std = state.norm_inv_std;
  in.active = state.active;
  ensemble_rollout_batched(ExecSpace(), dynamics_.params(), dynamics_.gru_reset(), in, settings_,
                           paths_);
  window_mean_paths(ExecSpace(), paths_, horizons_device_, horizons_, kTargetBefore, kTargetAfter,
                    state.active, windows_);

  const int R = runs_, K = int(horizons_.size()), N = settings_.scenarios, E = dynamics_.members();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CurveForecast f;
  f.runs = R;
  f.horizons = K;
  f.paths = N * E;
  f.mean.assign(std::size_t(R * K), nan);
  f.q05 = f.q50 = f.q95 = f.mean;
  f.paths_last.assign(std::size_t(R) * std::size_t(f.paths), nan);
  const auto active = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.active);
  // The whole (R, N, E, K) block: its last-horizon slice is strided, and Kokkos copies strided
  // views only within one memory space.
  const auto windows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), windows_);
  auto q = Kokkos::create_mirror_view(stats_.loss_quantiles);
  auto moments = Kokkos::create_mirror_view(stats_.member_moments);
  auto log_of = [](double L) { return std::log(std::max(L, kMinLoss)); };
  for (int r = 0; r < R; ++r) {
    if (active(r) == 0) continue;
    const View3<real> w = Kokkos::subview(windows_, r, Kokkos::ALL(), Kokkos::ALL(), Kokkos::ALL());
    compute_rollout_statistics(ExecSpace(), w, stats_);
    Kokkos::deep_copy(q, stats_.loss_quantiles);
    Kokkos::deep_copy(moments, stats_.member_moments);
    for (int k = 0; k < K; ++k) {
      const std::size_t at = std::size_t(r * K + k);
      // The log is monotone: quantiles of the log window loss are the logs of its quantiles.
      f.q05[at] = log_of(q(k, 0));
      f.q50[at] = log_of(q(k, 1));
      f.q95[at] = log_of(q(k, 2));
      double mean = 0;  // mean of log L over the paths: members have N paths each
      for (int m = 0; m < E; ++m) mean += moments(k, m, 1);
      f.mean[at] = mean / E;
    }
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < E; ++m)
        f.paths_last[std::size_t(r) * std::size_t(f.paths) + std::size_t(n * E + m)] =
            log_of(windows(r, n, m, K - 1));
  }
  return f;
}

}  // namespace hpt::forecast
