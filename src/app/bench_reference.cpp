#include "app/bench_reference.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace hpt::app {

RolloutBenchInputs make_rollout_bench_inputs(const RolloutSize& sz, std::uint64_t seed) {
  RolloutBenchInputs in;
  in.params = RssmParams<real>(sz.members, sz.hidden, sz.stochastic, sz.input);
  initialize_rssm_params(ExecSpace(), in.params, seed);
  in.h0 = View2<real>("hpt::bench_h0", sz.members, sz.hidden);
  fill_uniform(ExecSpace(), in.h0.data(), in.h0.size(), seed, 1001, 0.5);
  in.inputs.x0 = View1<real>("hpt::bench_x0", sz.input);
  fill_uniform(ExecSpace(), in.inputs.x0.data(), in.inputs.x0.size(), seed, 1002, 1.0);
  in.inputs.norm_mean = View1<real>("hpt::bench_norm_mean", sz.input);
  in.inputs.norm_inv_std = View1<real>("hpt::bench_norm_inv_std", sz.input);
  fill_uniform(ExecSpace(), in.inputs.norm_mean.data(), sz.input, seed, 1003, 0.1);
  Kokkos::deep_copy(in.inputs.norm_inv_std, real(1));
  // A plausible loss state: log loss about log(0.5), a gently decreasing recent window.
  in.inputs.loss_states = View1<LossState<real>>("hpt::bench_loss_state", 1);
  auto st = Kokkos::create_mirror_view(in.inputs.loss_states);
  LossState<real> s{};
  s.log_loss = real(std::log(0.5));
  s.ema4 = s.log_loss + real(0.01);
  s.ema16 = s.log_loss + real(0.05);
  s.ema64 = s.log_loss + real(0.2);
  s.best = s.log_loss - real(0.02);
  s.first = real(std::log(2.3));
  s.mean32 = s.log_loss + real(0.04);
  s.std32 = real(0.05);
  for (int i = 0; i < kLossWindow; ++i) s.window[i] = s.log_loss + real(0.01 * (kLossWindow - 1 - i));
  s.count = kLossWindow;
  st(0) = s;
  Kokkos::deep_copy(in.inputs.loss_states, st);
  in.settings.horizon = sz.horizon;
  in.settings.scenarios = sz.scenarios;
  in.settings.seed = seed;
  in.settings.feature_update = FeatureUpdate::Rich;
  in.settings.clamp = 10.0;
  return in;
}

void fill_random_history(const TelemetryHistory<real>& h, std::uint64_t seed) {
  const auto loss = h.loss;
  const auto other = h.other;
  const auto scalars = h.scalars;
  const int R = h.runs(), LC = h.loss_capacity(), OC = h.other_capacity();
  Kokkos::parallel_for(
      "hpt::bench_fill_history", Kokkos::RangePolicy<ExecSpace>(0, R), KOKKOS_LAMBDA(const int r) {
        for (int i = 0; i < LC; ++i)
          loss(r, i) = real(0.1 + 2.0 * rng::uniform(rng::key(seed, r, 0, i)));
        for (int s = 0; s < int(other.extent(1)); ++s)
          for (int i = 0; i < OC; ++i)
            other(r, s, i) = real(0.01 + rng::uniform(rng::key(seed, r, 1 + s, i)));
        for (int c = 0; c < int(scalars.extent(1)); ++c)
          scalars(r, c) = 0.01 + rng::uniform(rng::key(seed, r, 100, c));
        scalars(r, telemetry::kPhase) = telemetry::kFull;
        scalars(r, telemetry::kStep) = 1000;
        scalars(r, telemetry::kRecordCount) = 1000;
      });
  const auto head = h.head;
  const auto count = h.count;
  Kokkos::parallel_for(
      "hpt::bench_fill_rings", Kokkos::RangePolicy<ExecSpace>(0, R), KOKKOS_LAMBDA(const int r) {
        for (int s = 0; s < int(head.extent(1)); ++s) {
          head(r, s) = (r * 7 + s) % (s == 0 ? LC : OC);  // wrapped rings
          count(r, s) = s == 0 ? LC : OC;
        }
      });
  Kokkos::fence();
}

}  // namespace hpt::app
