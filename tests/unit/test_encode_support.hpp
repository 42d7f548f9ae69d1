#pragma once
// Shared by the encoder tests: random telemetry records, a plain host model of what each run has
// received (full per-series sequences, no rings), and a driver that pushes the same records into a
// device TelemetryHistory step by step. References are computed from the host model, whose "ring"
// is simply the newest `capacity` values of each sequence.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/telemetry_history.hpp"

namespace hpt::test {

// Everything one run received, values rounded to Real where the device stores them in Real.
struct HostRun {
  std::vector<double> loss, grad, update, cos, weight;         // pushed series, oldest first
  std::vector<double> val;                                     // validation losses, oldest first
  TelemetryRecord last{};                                      // newest active record
  double loss_now = std::numeric_limits<double>::quiet_NaN();  // newest loss, not rounded
  double grad_now = std::numeric_limits<double>::quiet_NaN();  // newest gradient norm
  long records = 0;
  double forecast_error = 0.0;
  bool has_forecast_error = false;
  double grad_tensor_log_std = 0.0, grad_tensor_log_range = 0.0;
  // Newest `cap` values of a sequence (the ring's content, oldest first).
  static std::vector<double> newest(const std::vector<double>& v, int cap) {
    const std::size_t n = std::min<std::size_t>(v.size(), std::size_t(cap));
    return std::vector<double>(v.end() - long(n), v.end());
  }
};

template <class Real>
double as_stored(double v) {
  return double(Real(v));
}

// Applies a record to the host model exactly as the documented semantics of push_records say.
template <class Real>
void apply_record(HostRun& run, const TelemetryRecord& t) {
  if (!t.active) return;
  if (t.has_loss) {
    run.loss.push_back(as_stored<Real>(t.loss));
    run.loss_now = t.loss;
  }
  if (t.has_val_loss) run.val.push_back(t.val_loss);
  if (t.has_grad) {
    run.grad.push_back(as_stored<Real>(t.grad_norm));
    run.grad_now = t.grad_norm;
    run.grad_tensor_log_std = t.grad_tensor_log_std;
    run.grad_tensor_log_range = t.grad_tensor_log_range;
  }
  if (t.has_update) {
    run.update.push_back(as_stored<Real>(t.update_norm));
    run.weight.push_back(as_stored<Real>(t.weight_norm));
  }
  if (t.has_update_cos) run.cos.push_back(as_stored<Real>(t.update_cos));
  if (t.has_forecast_error) {
    run.forecast_error = t.forecast_error;
    run.has_forecast_error = true;
  }
  run.last = t;
  run.records += 1;
}

// A plausible training step of run r at step t: decaying noisy loss, log-normal gradient norms,
// Adam-like moments, occasional validation losses, predicted steps without a gradient.
inline TelemetryRecord random_record(std::mt19937& rng, int r, int t) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> z(0.0, 1.0);
  TelemetryRecord rec;
  rec.step = t + 10 * r;
  rec.phase = int(u(rng) * 4.0) % 4;
  rec.steps_in_phase = long(u(rng) * 40.0);
  rec.has_loss = u(rng) < 0.95;
  rec.loss = (2.0 + 0.3 * (r % 5)) * std::exp(-t / (80.0 + r)) + 0.05 + 0.05 * std::fabs(z(rng));
  rec.has_val_loss = u(rng) < 0.15;
  rec.val_loss = rec.loss * (1.1 + 0.1 * u(rng));
  rec.has_grad = u(rng) < 0.85;
  rec.grad_norm = std::exp(0.5 * z(rng) - 0.002 * t);
  rec.grad_tensor_log_std = 0.5 + 0.2 * u(rng);
  rec.grad_tensor_log_range = 1.5 + u(rng);
  rec.has_update = u(rng) < 0.9;
  rec.update_norm = 1e-3 * std::exp(0.3 * z(rng));
  rec.weight_norm = 10.0 + 0.01 * t + u(rng);
  rec.has_update_cos = rec.has_update && u(rng) < 0.95;
  rec.update_cos = 2.0 * u(rng) - 1.0;
  rec.lr = 1e-3 * (1.0 + u(rng));
  rec.effective_lr = rec.lr * (0.5 + u(rng));
  rec.moment_mean = 1e-3 * (1.0 + u(rng));
  rec.moment_std = 5e-4 * (1.0 + u(rng));
  rec.variance_mean = 1e-6 * (1.0 + u(rng));
  rec.variance_std = 1e-7 * (1.0 + u(rng));
  rec.beta1_pow = std::pow(0.9, t + 1);
  rec.beta2_pow = std::pow(0.999, t + 1);
  rec.predicted_frac = u(rng) * 0.5;
  rec.has_forecast_error = u(rng) < 0.3;
  rec.forecast_error = z(rng);
  return rec;
}

// Pushes records step by step: steps[t][r] is run r's record of step t (one kernel per step, as in
// training and replay). Updates `host` (one HostRun per run) alongside.
template <class Space, class Real>
void push_steps(const TelemetryHistory<Real, typename Space::memory_space>& history,
                const std::vector<std::vector<TelemetryRecord>>& steps,
                std::vector<HostRun>& host) {
  using Mem = typename Space::memory_space;
  const int runs = history.runs();
  View1<TelemetryRecord, Mem> records("records", runs);
  auto mirror = Kokkos::create_mirror_view(records);
  for (const auto& step : steps) {
    for (int r = 0; r < runs; ++r) {
      mirror(r) = step[r];
      apply_record<Real>(host[r], step[r]);
    }
    Kokkos::deep_copy(records, mirror);
    push_records(Space(), history, View1<const TelemetryRecord, Mem>(records));
  }
  Space().fence();
}

// Random steps for `runs` runs; run r gets lengths[r] active steps (inactive records afterwards).
inline std::vector<std::vector<TelemetryRecord>> random_steps(std::mt19937& rng,
                                                              const std::vector<int>& lengths) {
  const int longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::vector<TelemetryRecord>> steps(longest,
                                                  std::vector<TelemetryRecord>(lengths.size()));
  for (int t = 0; t < longest; ++t)
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      steps[t][r] = random_record(rng, int(r), t);
      steps[t][r].active = t < lengths[r];
    }
  return steps;
}

}  // namespace hpt::test
