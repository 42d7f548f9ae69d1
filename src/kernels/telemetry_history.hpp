#pragma once
// Device-resident telemetry of R runs (docs/method.md#telemetry): ring buffers of the per-step
// series and a table of the latest scalar values per run. One record per run and step is pushed
// with one small kernel, so training (R = 1, every step) and replay (R in the thousands) share the
// same layout and encoders.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <limits>
#include <string>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/run_layout.hpp"

namespace hpt {

namespace telemetry {

// Columns of the per-run scalar table (double, so the step count and lr stay exact).
enum Scalar : int {
  kStep = 0,            // training step of the newest record
  kLoss,                // current minibatch loss L (NaN on a fresh run)
  kGradNorm,            // current global gradient norm g (NaN on a fresh run)
  kValLoss,             // newest validation loss
  kValLossPrev,         // validation loss before it
  kValCount,            // number of validation losses recorded
  kLr,                  // learning rate
  kEffectiveLr,         // effective learning rate (after schedule and bias correction)
  kUpdateNorm,          // norm of the newest applied update
  kWeightNorm,          // weight norm
  kUpdateCos,           // cosine between the last two updates
  kMomentMean,          // optimizer first moment: mean |m| (SGD: momentum-buffer norm)
  kMomentStd,           // std of |m|
  kVarianceMean,        // optimizer second moment: mean v (0 for SGD)
  kVarianceStd,         // std of v
  kBeta1Pow,            // beta1^t
  kBeta2Pow,            // beta2^t
  kPhase,               // phase code (PhaseCode)
  kStepsInPhase,        // steps since the phase began
  kPredictedFrac,       // fraction of steps predicted so far
  kForecastError,       // last normalised forecast error
  kHasForecastError,    // 1 once a forecast error was recorded
  kGradTensorLogStd,    // std of log per-tensor gradient norms
  kGradTensorLogRange,  // max - min of log per-tensor gradient norms
  kRecordCount,         // number of records pushed (0: fresh run)
  kScalarCount
};

// Series kept as ring buffers. The loss has its own capacity; the others share one.
enum Series : int {
  kLossSeries = 0,  // raw minibatch loss L
  kGradSeries,      // global gradient norm
  kUpdateSeries,    // update norm
  kCosSeries,       // cosine between consecutive updates
  kWeightSeries,    // weight norm
  kSeriesCount
};
constexpr int kOtherSeries = kSeriesCount - 1;  // rows of TelemetryHistory::other

enum PhaseCode : int { kWarmup = 0, kFull = 1, kPredict = 2, kCorrect = 3 };

}  // namespace telemetry

// One training step of one run (docs/method.md#telemetry), filled on the host. The has_* flags say
// which series got a value this step (a predicted step has no gradient, a replayed curve may have
// only the loss); the always-present scalars (step, phase, lr, optimizer summary, ...) are taken
// from every active record.
struct TelemetryRecord {
  bool active =
      true;  // false: the run is left untouched this step (e.g. a replayed run that ended)
  long long step = 0;
  int phase = telemetry::kWarmup;
  long long steps_in_phase = 0;

  bool has_loss = false;
  double loss = 0.0;
  bool has_val_loss = false;
  double val_loss = 0.0;

  bool has_grad = false;  // grad_norm and the per-tensor dispersion
  double grad_norm = 0.0;
  double grad_tensor_log_std = 0.0;
  double grad_tensor_log_range = 0.0;

  bool has_update = false;  // update_norm and weight_norm
  double update_norm = 0.0;
  double weight_norm = 0.0;
  bool has_update_cos = false;  // false on the first update (no previous one)
  double update_cos = 0.0;

  double lr = 0.0;
  double effective_lr = 0.0;
  double moment_mean = 0.0;
  double moment_std = 0.0;
  double variance_mean = 0.0;
  double variance_std = 0.0;
  double beta1_pow = 0.0;
  double beta2_pow = 0.0;
  double predicted_frac = 0.0;
  bool has_forecast_error = false;
  double forecast_error = 0.0;
};

// Histories of R runs in memory space Mem. Ring entries are in Real (the bandwidth of the encoder),
// the scalar table in double. head = slot of the next write, count = valid entries (<= capacity).
template <class Real, class Mem = MemSpace>
struct TelemetryHistory {
  View2<Real, Mem> loss;       // (R, loss_capacity) raw loss L
  View3<Real, Mem> other;      // (R, kOtherSeries, other_capacity): series kGradSeries.. in order
  View2<int, Mem> head;        // (R, kSeriesCount)
  View2<int, Mem> count;       // (R, kSeriesCount)
  View2<double, Mem> scalars;  // (R, kScalarCount)

  KOKKOS_INLINE_FUNCTION int runs() const { return int(loss.extent(0)); }
  KOKKOS_INLINE_FUNCTION int loss_capacity() const { return int(loss.extent(1)); }
  KOKKOS_INLINE_FUNCTION int other_capacity() const { return int(other.extent(2)); }
  KOKKOS_INLINE_FUNCTION int capacity(int series) const {
    return series == telemetry::kLossSeries ? loss_capacity() : other_capacity();
  }
  // Ring slot of the i-th valid entry, oldest first (i in [0, count)).
  KOKKOS_INLINE_FUNCTION static int slot(int head, int count, int capacity, int i) {
    return (head - count + i + capacity) % capacity;
  }
  // Entry i (oldest first) of `series` of run r.
  KOKKOS_INLINE_FUNCTION Real entry(int r, int series, int i) const {
    const int s = slot(head(r, series), count(r, series), capacity(series), i);
    return series == telemetry::kLossSeries ? loss(r, s) : other(r, series - 1, s);
  }
};

// Allocates the histories of `runs` runs: empty rings, current loss and gradient norm NaN, every
// other scalar 0 (phase Warmup).
template <class Real, class Mem = MemSpace>
TelemetryHistory<Real, Mem> create_history(int runs, int loss_capacity, int other_capacity) {
  HPT_REQUIRE(runs >= 1 && loss_capacity >= 1 && other_capacity >= 1,
              "create_history: runs and capacities must be positive");
  TelemetryHistory<Real, Mem> h;
  h.loss = View2<Real, Mem>("hpt::history_loss", runs, loss_capacity);
  h.other = View3<Real, Mem>("hpt::history_other", runs, telemetry::kOtherSeries, other_capacity);
  h.head = View2<int, Mem>("hpt::history_head", runs, telemetry::kSeriesCount);
  h.count = View2<int, Mem>("hpt::history_count", runs, telemetry::kSeriesCount);
  h.scalars = View2<double, Mem>("hpt::history_scalars", runs, telemetry::kScalarCount);
  auto scalars = Kokkos::create_mirror_view(h.scalars);
  for (int r = 0; r < runs; ++r) {
    scalars(r, telemetry::kLoss) = std::numeric_limits<double>::quiet_NaN();
    scalars(r, telemetry::kGradNorm) = std::numeric_limits<double>::quiet_NaN();
  }
  Kokkos::deep_copy(h.scalars, scalars);
  return h;
}

// On an H200 with 256-step histories team per run is the fastest layout up to about 8K runs.
constexpr int kSeriesPerThreadMinRuns = 8192;

// The layout that `layout` names; Auto: ThreadPerRun on host backends; on a GPU TeamPerRun, and
// SeriesPerThread from kSeriesPerThreadMinRuns runs.
template <class Space>
RunLayout resolve_layout(RunLayout layout, int runs) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  if (layout != RunLayout::Auto) return layout;
  if (host) return RunLayout::ThreadPerRun;
  return runs >= kSeriesPerThreadMinRuns ? RunLayout::SeriesPerThread : RunLayout::TeamPerRun;
}

// Team policy of the encoders: one team per run. team_size 0 picks the default: one warp on a GPU
// (measured fastest on an H200 for 256-step histories), Kokkos::AUTO on host backends.
template <class Space>
Kokkos::TeamPolicy<Space> run_team_policy(const Space& space, int runs, int team_size) {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  if (team_size > 0) return Kokkos::TeamPolicy<Space>(space, runs, team_size);
  if (!host) return Kokkos::TeamPolicy<Space>(space, runs, 32);
  return Kokkos::TeamPolicy<Space>(space, runs, Kokkos::AUTO);
}

// Appends one record per run (records(r) for run r) with one kernel launch over the runs.
template <class Space, class Real>
HPT_LAUNCHER void push_records(
    const Space& space, const TelemetryHistory<Real, typename Space::memory_space>& history,
    const View1<const TelemetryRecord, typename Space::memory_space>& records) {
  using namespace telemetry;
  HPT_REQUIRE(int(records.extent(0)) == history.runs(),
              "push_records: one record per run expected (" + std::to_string(records.extent(0)) +
                  " records for " + std::to_string(history.runs()) + " runs)");
  const auto h = history;
  const auto rec = records;
  Kokkos::parallel_for(
      "hpt::push_records", Kokkos::RangePolicy<Space>(space, 0, h.runs()), KOKKOS_LAMBDA(int r) {
        const TelemetryRecord& t = rec(r);
        if (!t.active) return;
        // Writes v at the head of `series` and advances the ring.
        auto push = [&](int series, double v) {
          const int cap = h.capacity(series);
          const int at = h.head(r, series);
          if (series == kLossSeries)
            h.loss(r, at) = Real(v);
          else
            h.other(r, series - 1, at) = Real(v);
          h.head(r, series) = (at + 1) % cap;
          if (h.count(r, series) < cap) h.count(r, series) += 1;
        };
        auto s = [&](int column) -> double& { return h.scalars(r, column); };

        if (t.has_loss) {
          push(kLossSeries, t.loss);
          s(kLoss) = t.loss;
        }
        if (t.has_val_loss) {
          s(kValLossPrev) = s(kValLoss);
          s(kValLoss) = t.val_loss;
          s(kValCount) += 1.0;
        }
        if (t.has_grad) {
          push(kGradSeries, t.grad_norm);
          s(telemetry::kGradNorm) = t.grad_norm;
          s(kGradTensorLogStd) = t.grad_tensor_log_std;
          s(kGradTensorLogRange) = t.grad_tensor_log_range;
        }
        if (t.has_update) {
          push(kUpdateSeries, t.update_norm);
          push(kWeightSeries, t.weight_norm);
          s(telemetry::kUpdateNorm) = t.update_norm;
          s(telemetry::kWeightNorm) = t.weight_norm;
        }
        if (t.has_update_cos) {
          push(kCosSeries, t.update_cos);
          s(telemetry::kUpdateCos) = t.update_cos;
        }
        if (t.has_forecast_error) {
          s(kForecastError) = t.forecast_error;
          s(kHasForecastError) = 1.0;
        }
        s(kStep) = double(t.step);
        s(kPhase) = double(t.phase);
        s(kStepsInPhase) = double(t.steps_in_phase);
        s(kLr) = t.lr;
        s(kEffectiveLr) = t.effective_lr;
        s(kMomentMean) = t.moment_mean;
        s(kMomentStd) = t.moment_std;
        s(kVarianceMean) = t.variance_mean;
        s(kVarianceStd) = t.variance_std;
        s(kBeta1Pow) = t.beta1_pow;
        s(kBeta2Pow) = t.beta2_pow;
        s(kPredictedFrac) = t.predicted_frac;
        s(kRecordCount) += 1.0;
      });
}

}  // namespace hpt
