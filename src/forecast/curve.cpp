#include "forecast/curve.hpp"

#include <algorithm>
#include <limits>

namespace hpt::forecast {

double validation_at(const Curve& c, long long step) {
  const auto it = std::lower_bound(c.val_steps.begin(), c.val_steps.end(), step);
  if (it == c.val_steps.end() || *it != step) return std::numeric_limits<double>::quiet_NaN();
  return c.val_loss[std::size_t(it - c.val_steps.begin())];
}

int entries_upto(const Curve& c, long long t) {
  return int(std::upper_bound(c.steps.begin(), c.steps.end(), t) - c.steps.begin());
}

int logged_upto(const Curve& c, int n) {
  while (n > 0 && !logged_entry(c, n - 1)) --n;
  return n;
}

bool origin_entry(const Curve& c, int i, long long every) {
  const long long step = c.steps[std::size_t(i)];
  if (c.logged.empty()) return step % every == 0;
  if (!logged_entry(c, i)) return false;
  const int before = logged_upto(c, i);  // entries up to the previous logged one
  if (before == 0) return step % every == 0;
  const long long previous = c.steps[std::size_t(before - 1)];
  return step / every > previous / every;  // a multiple of `every` in (previous, step]
}

long long first_logged_from(const Curve& c, long long step) {
  if (c.logged.empty()) return step;
  for (int i = int(std::lower_bound(c.steps.begin(), c.steps.end(), step) - c.steps.begin());
       i < int(c.steps.size()); ++i)
    if (logged_entry(c, i)) return c.steps[std::size_t(i)];
  return step;
}

}  // namespace hpt::forecast
