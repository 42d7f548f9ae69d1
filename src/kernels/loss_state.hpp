#pragma once
// Per-run summary of the loss history that a rollout needs to re-compute the loss-derived features
// ([R] in rich_features.hpp) along an imagined path (docs/method.md#ensemble-rollout). Filled from
// the telemetry history by the encoder (extract_loss_state), consumed by the ensemble rollout. All
// values are in log-loss space (l = log(max(L, 1e-12))) and raw, i.e. before the z-score
// normaliser.
#include <Kokkos_Core.hpp>

namespace hpt {

// How the rollout evolves the features x along an imagined loss path.
enum class FeatureUpdate : int {
  LossOnly =
      0,    // encoder `prototype`: only x[0] (the raw loss) changes (the prototype's behaviour)
  Rich = 1  // encoder `rich`: every [R] feature is recomputed and re-normalised
};

constexpr int kLossWindow = 8;  // window of the slope feature that the rollout recomputes

template <class Real>
struct LossState {
  Real log_loss;             // l_t
  Real ema4, ema16, ema64;   // EMA_tau(l) at t, alpha = 1/tau
  Real best;                 // min l over the history
  Real first;                // l of the oldest history entry
  Real mean32, std32;        // mean and std of l over the last 32 (held fixed along the path)
  Real window[kLossWindow];  // the newest log losses, window[kLossWindow-1] = l_t; see `count`
  int count;                 // how many entries of `window` are real (the rest are at the front)
};

}  // namespace hpt
