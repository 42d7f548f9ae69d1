#include "forecast/validation_curve.hpp"

#include <algorithm>

#include "forecast/curve_densify.hpp"

namespace hpt::forecast {

namespace {

// The run's learning rate at `step`: at its first entry at or after it (its last past the end).
double lr_at(const Curve& run, long long step) {
  const auto it = std::lower_bound(run.steps.begin(), run.steps.end(), step);
  const std::size_t i =
      it == run.steps.end() ? run.steps.size() - 1 : std::size_t(it - run.steps.begin());
  return run.lr[i];
}

}  // namespace

bool validation_curve(const Curve& run, Curve& out) {
  if (run.val_steps.size() < kMinValidationPoints) return false;
  Curve v;
  v.id = run.id + "/validation";
  v.group = run.group;
  v.split = run.split;
  v.steps = run.val_steps;
  v.loss = run.val_loss;
  const bool has_lr = !run.lr.empty() && !run.steps.empty();
  if (has_lr)
    for (const long long s : v.steps) v.lr.push_back(lr_at(run, s));
  // Filled in between the validation steps, the rate is the run's own, not an interpolation.
  if (densify_if_sparse(v) && has_lr)
    for (std::size_t i = 0; i < v.steps.size(); ++i) v.lr[i] = lr_at(run, v.steps[i]);
  out = std::move(v);
  return true;
}

}  // namespace hpt::forecast
