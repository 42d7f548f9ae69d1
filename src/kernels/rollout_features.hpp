#pragma once
// The per-step update of a rollout path's loss state and of the features that evolve with it
// (docs/method.md#ensemble-rollout), shared by every rollout kernel.
#include <Kokkos_Core.hpp>

#include "core/math.hpp"
#include "kernels/loss_state.hpp"
#include "kernels/rich_features.hpp"

namespace hpt {
namespace detail {

// Least-squares slope per step of the newest min(count, kLossWindow) entries of the window.
template <class Real>
KOKKOS_INLINE_FUNCTION Real window_slope(const LossState<Real>& st) {
  const int n = st.count < kLossWindow ? st.count : kLossWindow;
  if (n < 2) return Real(0);
  const Real* y = st.window + (kLossWindow - n);
  Real mean = 0;
  for (int i = 0; i < n; ++i) mean += y[i];
  mean /= Real(n);
  const Real centre = Real(n - 1) / Real(2);
  Real sxy = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    const Real dx = Real(i) - centre;
    sxy += dx * (y[i] - mean);
    sxx += dx * dx;
  }
  return sxy / sxx;
}

// l <- l + delta, continue the path's loss statistics, and write the features that evolve into x:
// LossOnly sets x[0] to the raw loss; Rich recomputes every [R] feature of rich_features.hpp and
// re-normalises it with the normaliser's fixed mean and 1/std.
template <class Real, class VecX, class VecStat>
KOKKOS_INLINE_FUNCTION void advance_loss_features(LossState<Real>& st, const Real delta,
                                                  const FeatureUpdate mode, const VecX& x,
                                                  const VecStat& mean, const VecStat& inv_std,
                                                  const Real clamp) {
  st.log_loss += delta;
  const Real l = st.log_loss;
  st.ema4 += (l - st.ema4) / Real(4);
  st.ema16 += (l - st.ema16) / Real(16);
  st.ema64 += (l - st.ema64) / Real(64);
  st.best = math::min(st.best, l);
  for (int i = 0; i + 1 < kLossWindow; ++i) st.window[i] = st.window[i + 1];
  st.window[kLossWindow - 1] = l;
  if (st.count < kLossWindow) ++st.count;

  if (mode == FeatureUpdate::LossOnly) {
    x(0) = math::exp(l);
    return;
  }
  auto put = [&](const int index, const Real raw) {
    x(index) = math::clamp((raw - mean(index)) * inv_std(index), -clamp, clamp);
  };
  put(rich::kLogLoss, l);
  put(rich::kLossSlope8, window_slope(st));
  put(rich::kLossEmaGap4, l - st.ema4);
  put(rich::kLossEmaGap16, l - st.ema16);
  put(rich::kLossEmaGap64, l - st.ema64);
  put(rich::kLossBestGap, l - st.best);
  put(rich::kLossLastDelta, delta);
  put(rich::kLossZ32, (l - st.mean32) / (st.std32 + Real(1e-8)));
  put(rich::kLossProgress, st.first - l);
}

// How a path's features follow its loss (settings.feature_update, encoder.clamp) and the
// normaliser row they are re-normalised with (Rich).
template <class Real, class VecStat>
struct RolloutFeatures {
  FeatureUpdate mode;
  VecStat mean, inv_std;
  Real clamp;
  template <class VecX>
  KOKKOS_INLINE_FUNCTION void advance(LossState<Real>& st, const Real delta, const VecX& x) const {
    advance_loss_features(st, delta, mode, x, mean, inv_std, clamp);
  }
};

template <class Real, class VecStat>
KOKKOS_INLINE_FUNCTION RolloutFeatures<Real, VecStat> rollout_features(const FeatureUpdate mode,
                                                                       const VecStat& mean,
                                                                       const VecStat& inv_std,
                                                                       const Real clamp) {
  return {mode, mean, inv_std, clamp};
}

}  // namespace detail
}  // namespace hpt
