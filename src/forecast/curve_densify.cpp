#include "forecast/curve_densify.hpp"

#include <algorithm>
#include <string>

namespace hpt::forecast {

long long logging_interval(const Curve& c) {
  if (c.steps.size() < 2) return 1;
  std::vector<long long> gaps;
  for (std::size_t i = 1; i < c.steps.size(); ++i) gaps.push_back(c.steps[i] - c.steps[i - 1]);
  std::nth_element(gaps.begin(), gaps.begin() + long(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

namespace {

// Values at every step between the logged ones, linear between them (in the loss, not its log: a
// logged loss of exactly 0 must not pull its neighbours towards 0 by orders of magnitude).
std::vector<double> filled(const std::vector<long long>& steps, const std::vector<double>& values) {
  std::vector<double> out;
  if (values.empty()) return out;
  out.push_back(values[0]);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const long long gap = steps[i] - steps[i - 1];
    for (long long s = 1; s <= gap; ++s)
      out.push_back(values[i - 1] + (values[i] - values[i - 1]) * double(s) / double(gap));
  }
  return out;
}

}  // namespace

Curve densified(const Curve& c) {
  Curve d = c;
  d.steps.clear();
  d.logged.clear();
  if (c.steps.empty()) return d;
  for (long long s = c.steps.front(); s <= c.steps.back(); ++s) d.steps.push_back(s);
  d.logged.assign(d.steps.size(), 0);
  for (long long s : c.steps) d.logged[std::size_t(s - c.steps.front())] = 1;
  d.loss = filled(c.steps, c.loss);
  d.lr = filled(c.steps, c.lr);
  d.grad_norm = filled(c.steps, c.grad_norm);
  return d;
}

bool densifiable(const Curve& c) {
  const long long every = logging_interval(c);
  return every > 1 && every <= kMaxDensifyInterval;
}

void densify_sparse_runs(CurveSet& set) {
  int densified_runs = 0, sparse_runs = 0;
  long long lo = 0, hi = 0;
  for (Curve& c : set.runs) {
    const long long every = logging_interval(c);
    if (every <= 1) continue;
    if (every > kMaxDensifyInterval) {
      ++sparse_runs;
      continue;
    }
    lo = densified_runs ? std::min(lo, every) : every;
    hi = std::max(hi, every);
    ++densified_runs;
    c = densified(c);
  }
  if (densified_runs > 0)
    set.notes.push_back(
        std::to_string(densified_runs) + " runs are logged every " + std::to_string(lo) +
        (hi > lo ? " to " + std::to_string(hi) : "") +
        " steps (median spacing): read step by step, the loss interpolated between logged "
        "steps; forecasts are made only at logged steps");
  if (sparse_runs > 0)
    set.notes.push_back(std::to_string(sparse_runs) + " runs are logged more than " +
                        std::to_string(kMaxDensifyInterval) +
                        " steps apart: left as they are, so no target window of ten consecutive "
                        "steps is complete and none of their forecasts can be scored");
}

}  // namespace hpt::forecast
