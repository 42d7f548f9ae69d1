#pragma once
// Plain host references of the encoders (docs/method.md#encoders), written as direct loops over
// full per-series sequences (no rings, no Kokkos): what the unit tests and the bench compare the
// device kernels with. Host-only code; never called from a kernel.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/rich_features.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt::reference {

namespace rf = hpt::rich;

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

// ---- plain host statistics
inline std::vector<double> tail(const std::vector<double>& v, int w) {
  const std::size_t n = std::min<std::size_t>(v.size(), std::size_t(w));
  return std::vector<double>(v.end() - long(n), v.end());
}
inline double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}
inline double pop_std(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size()));
}
// Least-squares slope of v against 0, 1, ..., n-1.
inline double ls_slope(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 2) return 0.0;
  double sx = 0, sy = 0;
  for (std::size_t k = 0; k < n; ++k) sx += double(k), sy += v[k];
  const double mx = sx / double(n), my = sy / double(n);
  double sxy = 0, sxx = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sxy += (double(k) - mx) * (v[k] - my);
    sxx += (double(k) - mx) * (double(k) - mx);
  }
  return sxy / sxx;
}
inline double ema(const std::vector<double>& v, double tau) {
  double e = v.at(0);
  for (std::size_t k = 1; k < v.size(); ++k) e += (v[k] - e) / tau;
  return e;
}
// Over the newest min(32, n - 1) differences v_k - v_{k-1}.
inline double increase_fraction32(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  int count = 0, up = 0;
  for (std::size_t k = v.size() - 1; k >= 1 && count < 32; --k, ++count) up += v[k] > v[k - 1];
  return double(up) / double(count);
}
inline double abs_delta_mean32(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  int count = 0;
  double s = 0;
  for (std::size_t k = v.size() - 1; k >= 1 && count < 32; --k, ++count)
    s += std::fabs(v[k] - v[k - 1]);
  return s / double(count);
}
inline std::vector<double> logs(const std::vector<double>& v, double floor) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(std::max(x, floor)));
  return out;
}

constexpr double kLossFloor = 1e-12, kTiny = 1e-30;

inline std::array<double, 64> host_rich(const HostRun& run, int loss_cap, int other_cap) {
  std::array<double, 64> f{};
  const auto L = logs(HostRun::newest(run.loss, loss_cap), kLossFloor);
  const auto G = HostRun::newest(run.grad, other_cap);
  const auto U = HostRun::newest(run.update, other_cap);
  const auto C = HostRun::newest(run.cos, other_cap);
  const auto W = HostRun::newest(run.weight, other_cap);
  const auto lG = logs(G, kTiny), lU = logs(U, kTiny), lW = logs(W, kTiny);
  const bool fresh = run.records == 0;
  const TelemetryRecord& t = run.last;
  const std::size_t n = L.size(), ng = G.size(), nu = U.size(), nc = C.size(), nw = W.size();
  const double lt = n ? L.back() : 0.0;
  // loss group
  f[rf::kLogLoss] = lt;
  f[rf::kLossMean8] = mean(tail(L, 8));
  f[rf::kLossMean32] = mean(tail(L, 32));
  f[rf::kLossMean128] = mean(tail(L, 128));
  f[rf::kLossStd8] = pop_std(tail(L, 8));
  f[rf::kLossStd32] = pop_std(tail(L, 32));
  f[rf::kLossStd128] = pop_std(tail(L, 128));
  f[rf::kLossSlope8] = ls_slope(tail(L, 8));
  f[rf::kLossSlope32] = ls_slope(tail(L, 32));
  f[rf::kLossSlope128] = ls_slope(tail(L, 128));
  f[rf::kLossEmaGap4] = n ? lt - ema(L, 4) : 0.0;
  f[rf::kLossEmaGap16] = n ? lt - ema(L, 16) : 0.0;
  f[rf::kLossEmaGap64] = n ? lt - ema(L, 64) : 0.0;
  f[rf::kLossBestGap] = n ? lt - *std::min_element(L.begin(), L.end()) : 0.0;
  f[rf::kLossIncreaseFrac32] = increase_fraction32(L);
  f[rf::kLossLastDelta] = n >= 2 ? lt - L[n - 2] : 0.0;
  f[rf::kLossAbsDeltaMean32] = abs_delta_mean32(L);
  f[rf::kLossZ32] = n ? (lt - mean(tail(L, 32))) / (pop_std(tail(L, 32)) + 1e-8) : 0.0;
  if (n) {
    const auto w = tail(L, 128);
    f[rf::kLossRange128] =
        *std::max_element(w.begin(), w.end()) - *std::min_element(w.begin(), w.end());
  }
  f[rf::kLossCurvature] = ls_slope(tail(L, 8)) - ls_slope(tail(L, 32));
  f[rf::kLossProgress] = n ? L.front() - lt : 0.0;
  const std::size_t nv = run.val.size();
  const double lval = nv ? std::log(std::max(run.val.back(), kLossFloor)) : 0.0;
  f[rf::kValLogLoss] = lval;
  f[rf::kGenGap] = nv && n ? lval - ema(L, 16) : 0.0;
  f[rf::kValTrend] = nv >= 2 ? lval - std::log(std::max(run.val[nv - 2], kLossFloor)) : 0.0;
  // gradient group
  const double lg = ng ? lG.back() : 0.0;
  f[rf::kLogGrad] = lg;
  f[rf::kGradMean8] = mean(tail(lG, 8));
  f[rf::kGradMean32] = mean(tail(lG, 32));
  f[rf::kGradStd8] = pop_std(tail(lG, 8));
  f[rf::kGradStd32] = pop_std(tail(lG, 32));
  f[rf::kGradSlope8] = ls_slope(tail(lG, 8));
  f[rf::kGradSlope32] = ls_slope(tail(lG, 32));
  if (ng) {
    const auto w = tail(lG, 32);
    f[rf::kGradEmaRatio16] = lg - std::log(std::max(ema(G, 16), kTiny));
    f[rf::kGradMaxGap32] = *std::max_element(w.begin(), w.end()) - lg;
    f[rf::kGradMinGap32] = lg - *std::min_element(w.begin(), w.end());
    f[rf::kGradCv32] = pop_std(tail(G, 32)) / std::max(mean(tail(G, 32)), kTiny);
    f[rf::kLogLrGrad] = std::log(std::max(t.lr * G.back(), kTiny));
  }
  f[rf::kGradIncreaseFrac32] = increase_fraction32(G);
  f[rf::kGradTensorStd] = run.grad_tensor_log_std;
  f[rf::kGradTensorRange] = run.grad_tensor_log_range;
  f[rf::kLogGradOverLoss] = ng && n ? lg - lt : 0.0;
  // optimizer / update group
  const double lu = nu ? lU.back() : 0.0, lw = nw ? lW.back() : 0.0;
  f[rf::kLogLr] = fresh ? 0.0 : std::log(std::max(t.lr, kTiny));
  f[rf::kLogUpdate] = lu;
  f[rf::kLogUpdateOverWeight] = nu && nw ? lu - lw : 0.0;
  f[rf::kLogWeight] = lw;
  f[rf::kUpdateCos] = nc ? C.back() : 0.0;
  f[rf::kUpdateCosMean8] = mean(tail(C, 8));
  f[rf::kUpdateCosMean32] = mean(tail(C, 32));
  f[rf::kUpdateSlope8] = ls_slope(tail(lU, 8));
  f[rf::kUpdateEmaRatio16] = nu ? lu - std::log(std::max(ema(U, 16), kTiny)) : 0.0;
  f[rf::kLogMomentMean] = fresh ? 0.0 : std::log(std::max(t.moment_mean, kTiny));
  const double v = t.variance_mean;
  f[rf::kLogVarianceMean] = v > 0 ? std::log(v) : 0.0;
  f[rf::kMomentSnr] =
      v > 0 ? std::log(std::max(t.moment_mean, kTiny) / (std::sqrt(v) + 1e-8)) : 0.0;
  f[rf::kBeta1Pow] = t.beta1_pow;
  f[rf::kBeta2Pow] = t.beta2_pow;
  f[rf::kWeightSlope32] = ls_slope(tail(lW, 32));
  f[rf::kLogMomentStd] = fresh ? 0.0 : std::log(t.moment_std + 1e-12);
  // context group
  f[rf::kPhaseFull] = t.phase == 1;
  f[rf::kPhasePredict] = t.phase == 2;
  f[rf::kPhaseCorrect] = t.phase == 3;
  f[rf::kStepsInPhase] = double(t.steps_in_phase) / 100.0;
  f[rf::kLogStep] = std::log10(double(t.step) + 1.0);
  f[rf::kPredictedFrac] = t.predicted_frac;
  f[rf::kForecastError] = run.has_forecast_error ? run.forecast_error : 0.0;
  f[rf::kValAvailable] = nv ? 1.0 : 0.0;
  return f;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Stats {
  double mean = 0, std = 0, min = 0, max = 0;
};

// The prototype's BufferStatistics: population mean/std (NaN propagates), NaN-ignoring min/max
// (NaN only when every entry is NaN), all 0 for an empty buffer.
inline Stats host_stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / double(v.size()));
  s.min = kNaN;
  s.max = kNaN;
  for (double x : v) {
    s.min = std::fmin(s.min, x);
    s.max = std::fmax(s.max, x);
  }
  return s;
}

inline std::array<double, 64> host_prototype(const HostRun& run, int loss_cap, int grad_cap) {
  std::array<double, 64> f{};
  const auto losses = HostRun::newest(run.loss, loss_cap);
  const auto grads = HostRun::newest(run.grad, grad_cap);
  const Stats ls = host_stats(losses), gs = host_stats(grads);
  const TelemetryRecord& t = run.last;  // zero-initialised on a fresh run
  const double g = run.grad_now;
  f[0] = run.loss_now;
  f[1] = ls.mean;
  f[2] = ls.std;
  f[3] = ls.min;
  f[4] = ls.max;
  f[5] = 0.0;
  f[6] = 1.0;
  if (losses.size() >= 32) {
    double recent = 0, older = 0;
    const std::size_t n = losses.size();
    for (std::size_t k = 0; k < 16; ++k) recent += losses[n - 1 - k];
    for (std::size_t k = 16; k < 32; ++k) older += losses[n - 1 - k];
    recent /= 16.0;
    older /= 16.0;
    f[5] = recent - older;
    f[6] = recent / std::fmax(older, 1e-8);
  }
  f[7] = double(t.step) / 10000.0;
  f[8] = g;
  f[9] = gs.mean;
  f[10] = gs.std;
  f[11] = gs.min;
  f[12] = gs.max;
  f[13] = std::fmax(std::log10(g), -10.0);
  f[14] = std::fmin(g / std::fmax(gs.mean, 1e-8), 10.0);
  f[15] = gs.std / std::fmax(gs.mean, 1e-8);
  f[16] = t.moment_mean;
  f[17] = t.moment_std;
  f[18] = t.variance_mean;
  f[19] = t.variance_std;
  f[20] = std::fmax(std::log10(t.effective_lr), -10.0);
  f[21] = t.beta1_pow;
  f[22] = t.beta2_pow;
  f[24] = double(t.phase);
  f[25] = double(t.steps_in_phase) / 100.0;
  return f;
}

}  // namespace hpt::reference
