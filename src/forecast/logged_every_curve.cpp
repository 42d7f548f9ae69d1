#include "forecast/logged_every_curve.hpp"

#include "forecast/curve_densify.hpp"

namespace hpt::forecast {

namespace {

// Appends entry i of `from` (loss and whichever per-step columns it has) to `to`.
void keep_entry(const Curve& from, std::size_t i, Curve& to) {
  to.steps.push_back(from.steps[i]);
  to.loss.push_back(from.loss[i]);
  if (!from.lr.empty()) to.lr.push_back(from.lr[i]);
  if (!from.grad_norm.empty()) to.grad_norm.push_back(from.grad_norm[i]);
}

bool consecutive_steps(const Curve& run) {
  for (std::size_t i = 1; i < run.steps.size(); ++i)
    if (run.steps[i] != run.steps[i - 1] + 1) return false;
  return run.logged.empty();
}

}  // namespace

bool logged_every_curve(const Curve& run, long long every, Curve& out) {
  if (every < 2 || run.steps.empty() || !consecutive_steps(run)) return false;
  Curve c;
  c.id = run.id + "/every-" + std::to_string(every);
  c.group = run.group;
  c.split = run.split;
  c.diverged = run.diverged;
  const std::size_t last = run.steps.size() - 1;
  for (std::size_t i = 0; i <= last; ++i)
    if (run.steps[i] % every == 0 || i == last) keep_entry(run, i, c);
  if (c.steps.size() < kMinLoggedEntries) return false;
  densify_if_sparse(c);
  out = std::move(c);
  return true;
}

}  // namespace hpt::forecast
