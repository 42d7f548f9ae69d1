#pragma once
// The divergence monitor of the hybrid loop: after every step it compares the realised loss and
// gradient norm with their running statistics and with the loss that was forecast for that step,
// and says how alarmed the loop should be. The signals and thresholds are the prototype's (loss
// sigma-deviation, gradient explosion and vanishing, non-finite values, oscillation, forecast
// error), wired as intended: the forecast signal compares the realised loss with its forecast.
//   loss deviation  dev = (L - ema) / max(sqrt(var), 1e-6):  caution |dev| > 0.7 tau, warning
//                   > tau, critical > 2 tau (tau = sigma, 3 by default)
//   gradient        warning g > E b, critical g > 10 E b (E = grad_explode, 100 by default),
//                   warning g < V b (V = grad_vanish, 0.01 by default; 0 turns it off) (b: the
//                   gradient EMA over the first 50 observations)
//   non-finite      L or g not finite: critical
//   forecast        rel = |L - forecast| / max(|L|, 0.1): caution > 0.2, warning > 0.5
//   oscillation     fraction of sign flips of consecutive loss differences over the last 100
//                   losses (>= 10): caution > 0.5, warning > 0.8
// escalate_after (3 by default) consecutive checks with a divergent warning (any warning but a
// vanishing gradient, which is how convergence looks) escalate to critical (0: never);
// clear_escalation() starts the count again (after the loop restored a snapshot). EMAs: alpha = 1
// on the first observation, 0.01 after; var <- 0.99 var + alpha d^2.
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace hpt::train {

enum class Alarm : int { Normal = 0, Caution = 1, Warning = 2, Critical = 3 };
const char* alarm_name(Alarm a);

struct DivergenceVerdict {
  Alarm level = Alarm::Normal;
  std::string reason;      // the signal that set the level ("" when normal)
  bool divergent = false;  // a warning-level signal other than a vanishing gradient fired
};

// The thresholds above; the defaults are the prototype's. Rates at the edge of stability make
// full training's own loss spike by more than 2 x 3 sigma, which these defaults call critical.
struct MonitorThresholds {
  double sigma = 3.0;
  double grad_explode = 100.0;
  double grad_vanish = 0.01;
  int escalate_after = 3;
};

// What one step shows the monitor.
struct StepSignals {
  double loss = 0;
  bool has_grad = false;  // false for a step without a backward pass
  double grad_norm = 0;
  bool has_forecast = false;  // a forecast was made for this step
  double forecast = 0;
};

class DivergenceMonitor {
 public:
  explicit DivergenceMonitor(const MonitorThresholds& thresholds = {}) : t_(thresholds) {}

  // Checks the step against the statistics so far, then adds it to the statistics (a non-finite
  // loss or gradient is never added).
  DivergenceVerdict observe(const StepSignals& step);

  // The statistics, for checkpoints (restored with restore()).
  struct State {
    double loss_ema = 0, loss_var = 0, grad_ema = 0, grad_var = 0, grad_baseline = 1.0;
    std::int64_t observations = 0, grad_observations = 0, escalation = 0;
    std::deque<double> losses;  // newest last, at most kHistory
  };
  const State& state() const { return s_; }
  void clear_escalation() { s_.escalation = 0; }
  // The statistics as numbers (checkpoints), and back.
  std::vector<double> save() const;
  void load(const std::vector<double>& values);
  void restore(const State& s) { s_ = s; }

  const MonitorThresholds& thresholds() const { return t_; }

  static constexpr std::size_t kHistory = 100;

 private:
  DivergenceVerdict check(const StepSignals& step) const;
  void add(const StepSignals& step);
  MonitorThresholds t_;
  State s_;
};

}  // namespace hpt::train
