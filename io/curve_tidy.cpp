#include "io/curve_tidy.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hpt::io {

namespace {

template <class T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<std::size_t>& order) {
  if (v.empty()) return v;
  std::vector<T> out;
  out.reserve(order.size());
  for (std::size_t i : order) out.push_back(v[i]);
  return out;
}

// The order that sorts `steps` (stable) with only the last of each repeated step; notes say what
// was out of order and what repeated.
std::vector<std::size_t> sorted_unique(const std::vector<long long>& steps,
                                       const std::vector<std::string>& where,
                                       const std::string& what, std::vector<std::string>& notes) {
  std::vector<std::size_t> order(steps.size());
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = 1; i < steps.size(); ++i)
    if (steps[i] < steps[i - 1]) {
      notes.push_back(what + ": " + where[i] + ": step " + std::to_string(steps[i]) +
                      " comes after step " + std::to_string(steps[i - 1]) +
                      "; the steps were sorted");
      break;
    }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return steps[a] < steps[b]; });
  std::vector<std::size_t> kept;
  std::size_t repeats = 0, first = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k + 1 < order.size() && steps[order[k + 1]] == steps[order[k]]) {
      if (repeats++ == 0) first = order[k + 1];
      continue;  // a later row of the same step follows: keep that one
    }
    kept.push_back(order[k]);
  }
  if (repeats > 0)
    notes.push_back(what + ": " + std::to_string(repeats) + " repeated step" +
                    (repeats > 1 ? "s" : "") + " (the first: step " + std::to_string(steps[first]) +
                    ", " + where[first] + "); each keeps its last row");
  return kept;
}

void reorder(forecast::Curve& c, std::vector<std::string>& where,
             const std::vector<std::size_t>& order) {
  c.steps = permuted(c.steps, order);
  c.loss = permuted(c.loss, order);
  c.grad_norm = permuted(c.grad_norm, order);
  c.lr = permuted(c.lr, order);
  where = permuted(where, order);
}

// Index of the first non-finite loss or gradient norm, or the length.
std::size_t first_divergent(const forecast::Curve& c) {
  for (std::size_t i = 0; i < c.steps.size(); ++i)
    if (!std::isfinite(c.loss[i]) || (!c.grad_norm.empty() && !std::isfinite(c.grad_norm[i])))
      return i;
  return c.steps.size();
}

void truncate(forecast::Curve& c, std::size_t n) {
  c.steps.resize(n), c.loss.resize(n);
  if (!c.grad_norm.empty()) c.grad_norm.resize(n);
  if (!c.lr.empty()) c.lr.resize(n);
}

void tidy_validation(RawCurve& raw, const std::string& what, std::vector<std::string>& notes) {
  forecast::Curve& c = raw.curve;
  const auto order = sorted_unique(c.val_steps, raw.val_where, what + " (validation)", notes);
  std::vector<long long> steps;
  std::vector<double> loss;
  for (std::size_t i : order)
    if (std::isfinite(c.val_loss[i]))
      steps.push_back(c.val_steps[i]), loss.push_back(c.val_loss[i]);
  c.val_steps = std::move(steps), c.val_loss = std::move(loss);
}

}  // namespace

bool tidy_curve(RawCurve& raw, std::vector<std::string>& notes) {
  forecast::Curve& c = raw.curve;
  const std::string what = "run '" + c.id + "'";
  reorder(c, raw.where, sorted_unique(c.steps, raw.where, what, notes));
  tidy_validation(raw, what, notes);
  const std::size_t n = first_divergent(c);
  if (n == c.steps.size()) return true;
  const std::string at = "step " + std::to_string(c.steps[n]) + ", " + raw.where[n];
  c.diverged = true;
  if (n == 0) {
    notes.push_back(what + " left out: it diverged at its first step (" + at + ")");
    return false;
  }
  notes.push_back(what + " diverged at " + at +
                  " (a non-finite loss or gradient norm): its curve " + "ends at step " +
                  std::to_string(c.steps[n - 1]));
  truncate(c, n);
  return true;
}

}  // namespace hpt::io
