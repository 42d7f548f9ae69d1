#pragma once
// Synthetic loss curves drawn from a prior (docs/method.md#synthetic-prior), in the spirit of the
// prior-fitted networks for learning curves (Adriaensen et al., LC-PFN, 2023): many plausible
// curves whose shapes the corpus of real runs may lack. Each curve follows the schedule-aware law
// of forecast/schedule_law.hpp under a drawn schedule, times multiplicative noise, with optional
// plateaus, spikes and divergence. run.mode = pretrain adds them to its corpus
// (pretrain.synthetic_runs).
#include <cstdint>
#include <vector>

#include "forecast/curve.hpp"

namespace hpt::forecast {

enum class SyntheticSchedule { kConstant, kCosine, kWsd, kStep, kLinear };
constexpr int kSyntheticSchedules = 5;

// The drawn parameters of one curve (stored so that tests can rebuild the curve).
struct SyntheticCurveSpec {
  int steps = 0;
  SyntheticSchedule schedule = SyntheticSchedule::kConstant;
  double peak_lr = 0;
  double L0 = 0, A = 0, alpha = 0, C = 0;     // the law in units of the normalised cumulative rate
  double noise = 0;                           // std of the log-loss noise
  double noise_corr = 0;                      // AR(1) coefficient of the noise
  int plateau_start = -1, plateau_steps = 0;  // the law's clock stops there (-1: none)
  int spike_step = -1;                        // a jump of log loss by spike_size, decaying
  double spike_size = 0;
  int diverge_step = -1;  // from here log loss grows by diverge_rate per step; ends when 3x first
  double diverge_rate = 0;
};

// The learning rate of step i (0-based) of `steps` under the schedule, peak 1.
double synthetic_lr(SyntheticSchedule schedule, int i, int steps);

// Draws the spec of curve `index` of the prior (a pure function of seed and index).
SyntheticCurveSpec draw_synthetic_spec(std::uint64_t seed, int index);

// The curve of a spec (noise from seed and index): steps 1..steps, loss, lr; `split` =
// "synthetic", `group` = "synthetic".
Curve make_synthetic_curve(const SyntheticCurveSpec& spec, std::uint64_t seed, int index);

std::vector<Curve> synthetic_curves(int count, std::uint64_t seed);

}  // namespace hpt::forecast
