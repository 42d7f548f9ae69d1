#pragma once
// Running z-score normaliser per (run, feature) (docs/method.md#normalisation): Welford statistics
// in double, updated with every encoded vector except while the run is in Predict (frozen), then
//   out = clamp((raw - mean) / sqrt(var + 1e-8), -clamp, clamp),  var = M2 / count (population),
// and 0 for a feature whose variance is exactly 0. The mean and 1/sqrt(var + 1e-8) used for the
// latest vector are kept in Real so the rollout can re-normalise the features it recomputes.
#include <Kokkos_Core.hpp>
#include <cstddef>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt {

template <class Real, class Mem = MemSpace>
struct FeatureNormalizer {
  View2<double, Mem> count;  // (R, F) samples seen
  View2<double, Mem> mean;   // (R, F) Welford mean
  View2<double, Mem> m2;     // (R, F) Welford sum of squared deviations
  View2<Real, Mem> center;   // (R, F) mean used for the latest normalisation
  View2<Real, Mem> inv_std;  // (R, F) 1/sqrt(var + 1e-8) used for it; 0 where var == 0
  double clamp = 10.0;

  int runs() const { return int(count.extent(0)); }
  int features() const { return int(count.extent(1)); }
};

constexpr double kNormalizerEps = 1e-8;

template <class Real, class Mem = MemSpace>
FeatureNormalizer<Real, Mem> create_normalizer(int runs, int features, double clamp) {
  HPT_REQUIRE(runs >= 1 && features >= 1 && clamp > 0.0, "create_normalizer: bad sizes or clamp");
  FeatureNormalizer<Real, Mem> n;
  n.count = View2<double, Mem>("hpt::normalizer_count", runs, features);
  n.mean = View2<double, Mem>("hpt::normalizer_mean", runs, features);
  n.m2 = View2<double, Mem>("hpt::normalizer_m2", runs, features);
  n.center = View2<Real, Mem>("hpt::normalizer_center", runs, features);
  n.inv_std = View2<Real, Mem>("hpt::normalizer_inv_std", runs, features);
  n.clamp = clamp;
  return n;
}

// Updates the statistics with raw (unless the run's phase in `history` is Predict) and writes the
// normalised features to out. A non-finite raw value is skipped and gives 0.
template <class Space, class Real>
HPT_LAUNCHER void normalize(const Space& space,
                            const FeatureNormalizer<Real, typename Space::memory_space>& state,
                            const TelemetryHistory<Real, typename Space::memory_space>& history,
                            const View2<Real, typename Space::memory_space>& raw,
                            const View2<Real, typename Space::memory_space>& out) {
  const int runs = state.runs(), features = state.features();
  HPT_REQUIRE(history.runs() == runs && int(raw.extent(0)) == runs &&
                  int(raw.extent(1)) == features && int(out.extent(0)) == runs &&
                  int(out.extent(1)) == features,
              "normalize: normaliser, history, raw and out must agree in runs and features");
  const auto s = state;
  const auto scalars = history.scalars;
  const auto x = raw;
  const auto y = out;
  const double clamp = state.clamp;
  Kokkos::parallel_for(
      "hpt::normalize_features",
      Kokkos::RangePolicy<Space>(space, 0, std::size_t(runs) * std::size_t(features)),
      KOKKOS_LAMBDA(std::size_t k) {
        const int r = int(k / features), f = int(k % features);
        const double v = double(x(r, f));
        const bool frozen = int(scalars(r, telemetry::kPhase)) == telemetry::kPredict;
        const bool finite = math::isfinite(v);
        double n = s.count(r, f), mean = s.mean(r, f), m2 = s.m2(r, f);
        if (!frozen && finite) {
          n += 1.0;
          const double delta = v - mean;
          mean += delta / n;
          m2 += delta * (v - mean);
          s.count(r, f) = n;
          s.mean(r, f) = mean;
          s.m2(r, f) = m2;
        }
        const double var = n > 0.0 ? m2 / n : 0.0;
        const double inv = var > 0.0 ? 1.0 / math::sqrt(var + kNormalizerEps) : 0.0;
        s.center(r, f) = Real(mean);
        s.inv_std(r, f) = Real(inv);
        y(r, f) = finite ? Real(math::clamp((v - mean) * inv, -clamp, clamp)) : Real(0);
      });
}

// Bytes normalize reads and writes for `runs` runs x `features` features (for the bench's GB/s).
inline std::size_t normalize_bytes(std::size_t runs, std::size_t features, std::size_t real_size) {
  return runs * (features * (2 * 3 * sizeof(double) + 4 * real_size) + sizeof(double));
}

}  // namespace hpt
