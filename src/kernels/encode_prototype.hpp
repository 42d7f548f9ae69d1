#pragma once
// `encoder = prototype` (docs/method.md#prototype-encoder, parity with the prototype): features
// 0-25 from the loss and gradient-norm histories and the scalar table; 23 and 26-63 are zero.
// Statistics are population statistics in double cast to Real, an empty history gives 0, min/max
// ignore NaN (C fmin/fmax) and are NaN only when every entry is NaN. One kernel, one team per run.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/multi_reducer.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

namespace prototype {

constexpr double kEps = 1e-8;

// Mean, std, min, max of one history (the prototype's BufferStatistics).
struct BufferStats {
  double mean, std, min, max;
};

// Statistics of `count` entries of run r's `series`, read once from the ring (two passes over the
// same cache lines: sums/min/max first, then squared deviations from the mean). Called by the whole
// team; the result is the same on every thread. Also returns the sums of the newest 16 and the 16
// before them (features 5 and 6).
template <class Member, class Real, class Mem>
KOKKOS_INLINE_FUNCTION BufferStats team_buffer_stats(const Member& team,
                                                     const TelemetryHistory<Real, Mem>& h, int r,
                                                     int series, double* newest16,
                                                     double* previous16) {
  const int n = h.count(r, series);
  BufferStats out{0.0, 0.0, 0.0, 0.0};
  if (n == 0) {
    *newest16 = *previous16 = 0.0;
    return out;
  }
  // Slots: sum, non-NaN count, newest-16 sum, previous-16 sum | min | max.
  using Pass1 = reduce::MultiReducer<4, 1, 1>;
  typename Pass1::value_type a;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, n),
      [&](int i, typename Pass1::value_type& acc) {
        const double v = double(h.entry(r, series, i));
        const bool nan = math::isnan(v);
        const int age = n - 1 - i;
        acc.v[0] += v;
        acc.v[1] += nan ? 0.0 : 1.0;
        if (age < 16) acc.v[2] += v;
        if (age >= 16 && age < 32) acc.v[3] += v;
        const double lo = nan ? reduce::infinity() : v;
        const double hi = nan ? -reduce::infinity() : v;
        if (lo < acc.v[4]) acc.v[4] = lo;
        if (hi > acc.v[5]) acc.v[5] = hi;
      },
      Pass1(a));
  const double mean = a.v[0] / n;
  double squares = 0.0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, n),
      [&](int i, double& acc) {
        const double d = double(h.entry(r, series, i)) - mean;
        acc += d * d;
      },
      Kokkos::Sum<double>(squares));
  const bool all_nan = a.v[1] == 0.0;
  const double nan = reduce::quiet_nan();
  out.mean = mean;
  out.std = math::sqrt(squares / n);
  out.min = all_nan ? nan : a.v[4];
  out.max = all_nan ? nan : a.v[5];
  *newest16 = a.v[2];
  *previous16 = a.v[3];
  return out;
}

}  // namespace prototype

// features(r, 0..63) for every run r of `history`; always one team per run (launch.team_size 0:
// the default of run_team_policy; launch.layout is ignored).
template <class Space, class Real>
HPT_LAUNCHER void encode_prototype(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& history,
    const View2<Real, typename Space::memory_space>& features, const EncodeLaunch& launch = {}) {
  using namespace telemetry;
  HPT_REQUIRE(int(features.extent(0)) == history.runs() && int(features.extent(1)) == kFeatures,
              "encode_prototype: features must be (runs, 64)");
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  const auto h = history;
  const auto x = features;
  Kokkos::parallel_for(
      "hpt::encode_prototype", run_team_policy(space, h.runs(), launch.team_size),
      KOKKOS_LAMBDA(const Member& team) {
        const int r = team.league_rank();
        double loss_new16, loss_prev16, grad_new16, grad_prev16;
        const prototype::BufferStats ls =
            prototype::team_buffer_stats(team, h, r, kLossSeries, &loss_new16, &loss_prev16);
        const prototype::BufferStats gs =
            prototype::team_buffer_stats(team, h, r, kGradSeries, &grad_new16, &grad_prev16);
        const int n_loss = h.count(r, kLossSeries);
        // The scalar row in registers: the divergent switch below must not wait on memory per case.
        double S[kScalarCount];
        for (int c = 0; c < kScalarCount; ++c) S[c] = h.scalars(r, c);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kFeatures), [&](int f) {
          const double eps = prototype::kEps;
          const double g = S[kGradNorm];
          double v = 0.0;
          switch (f) {
            case 0:
              v = S[kLoss];
              break;
            case 1:
              v = ls.mean;
              break;
            case 2:
              v = ls.std;
              break;
            case 3:
              v = ls.min;
              break;
            case 4:
              v = ls.max;
              break;
            case 5:
              v = n_loss >= 32 ? (loss_new16 - loss_prev16) / 16.0 : 0.0;
              break;
            case 6:
              v = n_loss >= 32 ? (loss_new16 / 16.0) / math::fmax(loss_prev16 / 16.0, eps) : 1.0;
              break;
            case 7:
              v = S[kStep] / 10000.0;
              break;
            case 8:
              v = g;
              break;
            case 9:
              v = gs.mean;
              break;
            case 10:
              v = gs.std;
              break;
            case 11:
              v = gs.min;
              break;
            case 12:
              v = gs.max;
              break;
            case 13:
              v = math::fmax(math::log10(g), -10.0);
              break;
            case 14:
              v = math::fmin(g / math::fmax(gs.mean, eps), 10.0);
              break;
            case 15:
              v = gs.std / math::fmax(gs.mean, eps);
              break;
            case 16:
              v = S[kMomentMean];
              break;
            case 17:
              v = S[kMomentStd];
              break;
            case 18:
              v = S[kVarianceMean];
              break;
            case 19:
              v = S[kVarianceStd];
              break;
            case 20:
              v = math::fmax(math::log10(S[kEffectiveLr]), -10.0);
              break;
            case 21:
              v = S[kBeta1Pow];
              break;
            case 22:
              v = S[kBeta2Pow];
              break;
            case 24:
              v = S[kPhase];
              break;
            case 25:
              v = S[kStepsInPhase] / 100.0;
              break;
            default:
              v = 0.0;
              break;  // 23 (reserved) and 26-63 (padding)
          }
          x(r, f) = Real(v);
        });
      });
}

// Bytes encode_prototype reads and writes for `runs` runs (for the bench's GB/s): the loss and
// gradient rings, heads/counts, the scalar table and the features.
inline std::size_t encode_prototype_bytes(std::size_t runs, std::size_t loss_capacity,
                                          std::size_t other_capacity, std::size_t real_size) {
  const std::size_t per_run = (loss_capacity + other_capacity) * real_size +
                              2 * telemetry::kSeriesCount * sizeof(int) +
                              telemetry::kScalarCount * sizeof(double) + kFeatures * real_size;
  return runs * per_run;
}

}  // namespace hpt
