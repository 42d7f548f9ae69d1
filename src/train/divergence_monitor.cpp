#include "train/divergence_monitor.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpt::train {

namespace {

// A vanishing gradient is how convergence looks, not a divergence: it warns (no predicting while
// it lasts) but never escalates to a critical restore.
void raise(DivergenceVerdict& v, Alarm level, const std::string& reason, bool divergent = true) {
  if (level >= Alarm::Warning && divergent) v.divergent = true;
  if (level > v.level) {
    const bool d = v.divergent;
    v = {level, reason, d};
  }
}

// Fraction of sign flips between consecutive differences (zero differences skipped).
double oscillation(const std::deque<double>& losses) {
  int flips = 0, prev_sign = 0;
  for (std::size_t i = 1; i < losses.size(); ++i) {
    const double d = losses[i] - losses[i - 1];
    const int sign = d > 0 ? 1 : (d < 0 ? -1 : 0);
    if (sign == 0) continue;
    if (prev_sign != 0 && sign != prev_sign) ++flips;
    prev_sign = sign;
  }
  return double(flips) / double(losses.size() - 1);
}

}  // namespace

std::vector<double> DivergenceMonitor::save() const {
  std::vector<double> v{s_.loss_ema,
                        s_.loss_var,
                        s_.grad_ema,
                        s_.grad_var,
                        s_.grad_baseline,
                        double(s_.observations),
                        double(s_.grad_observations),
                        double(s_.escalation)};
  v.insert(v.end(), s_.losses.begin(), s_.losses.end());
  return v;
}

void DivergenceMonitor::load(const std::vector<double>& v) {
  HPT_REQUIRE(v.size() >= 8 && v.size() <= 8 + kHistory,
              "DivergenceMonitor::load: wrong state size");
  s_.loss_ema = v[0], s_.loss_var = v[1], s_.grad_ema = v[2], s_.grad_var = v[3];
  s_.grad_baseline = v[4];
  s_.observations = std::int64_t(v[5]), s_.grad_observations = std::int64_t(v[6]);
  s_.escalation = std::int64_t(v[7]);
  s_.losses.assign(v.begin() + 8, v.end());
}

const char* alarm_name(Alarm a) {
  switch (a) {
    case Alarm::Normal:
      return "normal";
    case Alarm::Caution:
      return "caution";
    case Alarm::Warning:
      return "warning";
    case Alarm::Critical:
      return "critical";
  }
  return "?";
}

DivergenceVerdict DivergenceMonitor::check(const StepSignals& step) const {
  DivergenceVerdict v;
  const double loss = step.loss, g = step.grad_norm;
  const bool has_grad = step.has_grad;
  if (!std::isfinite(loss) || (has_grad && !std::isfinite(g))) {
    raise(v, Alarm::Critical, "non-finite loss or gradient");
    return v;
  }
  if (s_.observations > 0) {
    const double dev = (loss - s_.loss_ema) / std::max(std::sqrt(s_.loss_var), 1e-6);
    const double a = std::fabs(dev);
    const double tau = t_.sigma;
    if (a > 2 * tau)
      raise(v, Alarm::Critical, "loss deviates by " + std::to_string(dev) + " sigma");
    else if (a > tau)
      raise(v, Alarm::Warning, "loss deviates by " + std::to_string(dev) + " sigma");
    else if (a > 0.7 * tau)
      raise(v, Alarm::Caution, "loss deviates by " + std::to_string(dev) + " sigma");
  }
  if (has_grad && s_.grad_observations > 0) {
    const double limit = t_.grad_explode * s_.grad_baseline;
    if (g > 10.0 * limit)
      raise(v, Alarm::Critical, "gradient norm explodes");
    else if (g > limit)
      raise(v, Alarm::Warning, "gradient norm explodes");
    else if (g < t_.grad_vanish * s_.grad_baseline)
      raise(v, Alarm::Warning,
            "gradient norm vanishes; if the loss is converging, monitor.grad_vanish = 0 turns this "
            "check off",
            false);
  }
  if (step.has_forecast && std::isfinite(step.forecast)) {
    const double rel = std::fabs(loss - step.forecast) / std::max(std::fabs(loss), 0.1);
    if (rel > 0.5)
      raise(v, Alarm::Warning, "loss is far from its forecast");
    else if (rel > 0.2)
      raise(v, Alarm::Caution, "loss is off its forecast");
  }
  if (s_.losses.size() >= 10) {
    const double osc = oscillation(s_.losses);
    if (osc > 0.8)
      raise(v, Alarm::Warning, "loss oscillates");
    else if (osc > 0.5)
      raise(v, Alarm::Caution, "loss oscillates");
  }
  return v;
}

void DivergenceMonitor::add(const StepSignals& step) {
  const double alpha = s_.observations == 0 ? 1.0 : 0.01;
  const double d = step.loss - s_.loss_ema;
  s_.loss_ema += alpha * d;
  s_.loss_var = 0.99 * s_.loss_var + alpha * d * d;
  if (step.has_grad) {
    const double ag = s_.grad_observations == 0 ? 1.0 : 0.01;
    const double dg = step.grad_norm - s_.grad_ema;
    s_.grad_ema += ag * dg;
    s_.grad_var = 0.99 * s_.grad_var + ag * dg * dg;
    if (s_.grad_observations < 50) s_.grad_baseline = s_.grad_ema;
    ++s_.grad_observations;
  }
  s_.losses.push_back(step.loss);
  if (s_.losses.size() > kHistory) s_.losses.pop_front();
  ++s_.observations;
}

DivergenceVerdict DivergenceMonitor::observe(const StepSignals& step) {
  DivergenceVerdict v = check(step);
  s_.escalation = v.level >= Alarm::Warning && v.divergent ? s_.escalation + 1 : 0;
  if (v.level == Alarm::Warning && t_.escalate_after > 0 && s_.escalation >= t_.escalate_after)
    v = {Alarm::Critical, v.reason + " (" + std::to_string(t_.escalate_after) + " checks in a row)",
         true};
  if (std::isfinite(step.loss) && (!step.has_grad || std::isfinite(step.grad_norm))) add(step);
  return v;
}

}  // namespace hpt::train
