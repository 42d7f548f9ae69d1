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

bool sparse_interval(long long every) {
  return every > 1 && every <= kMaxDensifyInterval;
}

// densified(c) for c's logging interval `every`.
Curve densified_at(const Curve& c, long long every) {
  Curve d = c;
  d.steps.clear();
  d.loss.clear();
  d.lr.clear();
  d.grad_norm.clear();
  d.logged.clear();
  d.logged_every = every;
  // Loss, learning rate and gradient norm linear between logged steps (in the loss, not its log:
  // a logged loss of exactly 0 must not pull its neighbours towards 0 by orders of magnitude). A
  // gap wider than kMaxDensifyInterval (a run resumed much later) is left unfilled.
  const auto fill = [](std::vector<double>& out, const std::vector<double>& v, std::size_t i,
                       long long s, long long gap) {
    if (v.empty()) return;
    out.push_back(s == gap ? v[i] : v[i - 1] + (v[i] - v[i - 1]) * double(s) / double(gap));
  };
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const long long gap = i == 0 ? 1 : c.steps[i] - c.steps[i - 1];
    const long long from = gap > kMaxDensifyInterval ? gap : 1;
    for (long long s = from; s <= gap; ++s) {
      d.steps.push_back(i == 0 ? c.steps[0] : c.steps[i - 1] + s);
      d.logged.push_back(s == gap ? 1 : 0);
      fill(d.loss, c.loss, i, s, gap);
      fill(d.lr, c.lr, i, s, gap);
      fill(d.grad_norm, c.grad_norm, i, s, gap);
    }
  }
  return d;
}

}  // namespace

Curve densified(const Curve& c) {
  return densified_at(c, logging_interval(c));
}

bool densifiable(const Curve& c) {
  return sparse_interval(logging_interval(c));
}

bool densify_if_sparse(Curve& c) {
  const long long every = logging_interval(c);  // one pass over the gaps
  if (!sparse_interval(every)) return false;
  c = densified_at(c, every);
  return true;
}

void densify_sparse_runs(CurveSet& set) {
  int densified_runs = 0, sparse_runs = 0;
  long long lo = 0, hi = 0;
  for (Curve& c : set.runs) {
    if (densify_if_sparse(c)) {
      lo = densified_runs ? std::min(lo, c.logged_every) : c.logged_every;
      hi = std::max(hi, c.logged_every);
      ++densified_runs;
    } else if (logging_interval(c) > kMaxDensifyInterval) {
      ++sparse_runs;
    }
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
