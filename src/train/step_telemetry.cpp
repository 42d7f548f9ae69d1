#include "train/step_telemetry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hpt::train {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Standard deviation and range of the log per-tensor gradient norms.
void tensor_dispersion(const std::vector<double>& norms, double& log_std, double& log_range) {
  double lsum = 0, lsq = 0, lmin = 1e300, lmax = -1e300;
  for (double g : norms) {
    const double l = std::log(std::max(g, 1e-30));
    lsum += l, lsq += l * l, lmin = std::min(lmin, l), lmax = std::max(lmax, l);
  }
  const double nt = double(std::max<std::size_t>(1, norms.size()));
  log_std = std::sqrt(std::max(0.0, lsq / nt - (lsum / nt) * (lsum / nt)));
  log_range = norms.empty() ? 0.0 : lmax - lmin;
}

}  // namespace

TelemetryRecord step_record(std::int64_t step, const StepOutcome& s, const StepValidation& val,
                            long optimizer_steps) {
  const StepTelemetry& t = s.optimizer;
  TelemetryRecord r;
  r.step = step;
  r.phase = s.phase;
  r.steps_in_phase = step;
  r.has_loss = true;
  r.loss = s.loss.loss;
  r.has_val_loss = val.done && std::isfinite(val.loss);
  r.val_loss = val.loss;
  r.has_grad = s.real;
  r.grad_norm = t.grad_norm;
  tensor_dispersion(t.tensor_grad_norms, r.grad_tensor_log_std, r.grad_tensor_log_range);
  r.has_update = s.real;
  r.update_norm = t.update_norm;
  r.weight_norm = t.weight_norm;
  r.has_update_cos = s.real && optimizer_steps > 1;
  r.update_cos = t.update_cos;
  r.lr = s.lr;
  r.effective_lr = t.effective_lr;
  r.moment_mean = t.moment1;
  r.moment_std = t.moment1_std;
  r.variance_mean = t.moment2;
  r.variance_std = t.moment2_std;
  r.beta1_pow = t.beta1_power;
  r.beta2_pow = t.beta2_power;
  return r;
}

TraceRow step_trace_row(std::int64_t step, const StepOutcome& s, const StepValidation& val,
                        double wall_time, std::vector<double> features) {
  TraceRow row;
  row.step = step;
  row.phase = s.phase;
  row.loss = s.loss.loss;
  row.val_loss = val.done ? val.loss : kNaN;
  row.val_accuracy = val.done ? val.accuracy : kNaN;
  row.grad_norm = s.optimizer.grad_norm;
  row.update_norm = s.optimizer.update_norm;
  row.weight_norm = s.optimizer.weight_norm;
  row.update_cos = s.optimizer.update_cos;
  row.lr = s.lr;
  row.wall_time = wall_time;
  row.backward = s.real ? 1 : 0;
  row.block_horizon = s.block_horizon;
  row.forecast_mean = s.forecast_mean;
  row.forecast_hi = s.forecast_hi;
  row.confidence = s.confidence;
  row.verdict = s.verdict;
  row.features = std::move(features);
  return row;
}

}  // namespace hpt::train
