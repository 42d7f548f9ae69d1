#pragma once
// Learning-rate schedules, pure host functions of the step (docs/method.md#training-problems). Step
// t counts from 0.
//   warmup W (every style): t < W gives lr = base * (t + 1) / W; afterwards s = t - W and
//   constant: lr = base
//   step:     lr = base * gamma^floor(s / step_size)
//   cosine:   p = min(1, s / max(1, T - W)), lr = min_lr + (base - min_lr) * (1 + cos(pi p)) / 2,
//             T = schedule.total_steps (0: the run's number of steps)
#include <string>

#include "core/config.hpp"

namespace hpt {

enum class ScheduleStyle : int { Constant = 0, Step = 1, Cosine = 2 };

struct ScheduleOptions {
  ScheduleStyle style = ScheduleStyle::Constant;
  double base_lr = 0.05;
  long warmup = 0;
  long step_size = 1000;
  double gamma = 0.1;
  double min_lr = 0.0;
  long total_steps = 0;
};

class LrSchedule {
 public:
  // Throws InputError on inconsistent options (e.g. min_lr above the base lr).
  explicit LrSchedule(const ScheduleOptions& options);
  double lr(long step) const;
  double operator()(long step) const { return lr(step); }
  const ScheduleOptions& options() const { return options_; }
  std::string summary() const;

 private:
  ScheduleOptions options_;
};

// [schedule] style, warmup, step_size, gamma, min_lr, total_steps.
void declare_schedule_options(OptionSchema& schema);
// The schedule of the deck; base_lr is optimizer.lr, run_steps replaces total_steps = 0.
LrSchedule make_lr_schedule(const Config& config, double base_lr, long run_steps);

}  // namespace hpt
