#include "train/lr_schedule.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace hpt {

namespace {
constexpr double kPi = 3.141592653589793;

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

LrSchedule::LrSchedule(const ScheduleOptions& options) : options_(options) {
  const auto& o = options_;
  if (!(o.base_lr >= 0.0) || !std::isfinite(o.base_lr))
    throw InputError("optimizer.lr = " + num(o.base_lr) + " is not a learning rate; expected >= 0");
  if (o.warmup < 0)
    throw InputError("schedule.warmup = " + std::to_string(o.warmup) +
                     " is negative; expected >= 0");
  if (o.style == ScheduleStyle::Step) {
    if (o.step_size < 1)
      throw InputError("schedule.step_size = " + std::to_string(o.step_size) +
                       " is out of range; expected an integer >= 1");
    if (!(o.gamma > 0.0))
      throw InputError("schedule.gamma = " + num(o.gamma) + " is out of range; expected > 0");
  }
  if (o.style == ScheduleStyle::Cosine) {
    if (o.min_lr < 0.0 || o.min_lr > o.base_lr)
      throw InputError(
          "schedule.min_lr = " + num(o.min_lr) +
          " is out of range; expected a value in [0, optimizer.lr = " + num(o.base_lr) + "]");
    if (o.total_steps < 1)
      throw InputError("schedule.total_steps = " + std::to_string(o.total_steps) +
                       " is out of range; the cosine schedule needs a positive number of steps");
  }
}

double LrSchedule::lr(long step) const {
  const auto& o = options_;
  if (step < 0) step = 0;
  if (step < o.warmup) return o.base_lr * double(step + 1) / double(o.warmup);
  const long s = step - o.warmup;
  switch (o.style) {
    case ScheduleStyle::Constant:
      return o.base_lr;
    case ScheduleStyle::Step:
      return o.base_lr * std::pow(o.gamma, double(s / o.step_size));
    case ScheduleStyle::Cosine: {
      const long span = o.total_steps - o.warmup > 1 ? o.total_steps - o.warmup : 1;
      const double p = std::fmin(1.0, double(s) / double(span));
      return o.min_lr + (o.base_lr - o.min_lr) * 0.5 * (1.0 + std::cos(kPi * p));
    }
  }
  return o.base_lr;
}

std::string LrSchedule::summary() const {
  const auto& o = options_;
  std::string warm = o.warmup > 0 ? ", warmup " + std::to_string(o.warmup) : "";
  switch (o.style) {
    case ScheduleStyle::Constant:
      return "constant lr " + num(o.base_lr) + warm;
    case ScheduleStyle::Step:
      return "step lr " + num(o.base_lr) + " x " + num(o.gamma) + " every " +
             std::to_string(o.step_size) + warm;
    case ScheduleStyle::Cosine:
      return "cosine lr " + num(o.base_lr) + " -> " + num(o.min_lr) + " over " +
             std::to_string(o.total_steps) + warm;
  }
  return "?";
}

void declare_schedule_options(OptionSchema& schema) {
  schema.add_choice("schedule.style", "constant", {"constant", "step", "cosine"},
                    "learning-rate schedule applied to optimizer.lr");
  schema.add_int("schedule.warmup", 0, "linear warmup steps from lr/warmup to lr (every style)", 0);
  schema.add_int("schedule.step_size", 1000,
                 "step schedule: multiply by gamma every this many steps", 1);
  schema.add_real("schedule.gamma", 0.1, "step schedule: decay factor", 1e-12);
  schema.add_real("schedule.min_lr", 0.0, "cosine schedule: final learning rate", 0.0);
  schema.add_int(
      "schedule.total_steps", 0,
      "cosine schedule: steps from start to min_lr, warmup included (0: the run's steps)", 0);
}

LrSchedule make_lr_schedule(const Config& config, double base_lr, long run_steps) {
  ScheduleOptions o;
  const std::string& style = config.get_string("schedule.style");
  if (style == "constant")
    o.style = ScheduleStyle::Constant;
  else if (style == "step")
    o.style = ScheduleStyle::Step;
  else if (style == "cosine")
    o.style = ScheduleStyle::Cosine;
  else
    throw InputError("schedule.style = '" + style +
                     "' is not a schedule; expected constant, step or cosine");
  o.base_lr = base_lr;
  o.warmup = config.get_int("schedule.warmup");
  o.step_size = config.get_int("schedule.step_size");
  o.gamma = config.get_real("schedule.gamma");
  o.min_lr = config.get_real("schedule.min_lr");
  o.total_steps = config.get_int("schedule.total_steps");
  if (o.total_steps == 0) o.total_steps = run_steps;
  return LrSchedule(o);
}

}  // namespace hpt
