#include "forecast/forecast_combination.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hpt::forecast {

ForecastCombination::ForecastCombination(const std::vector<long long>& spacing, int experts,
                                         int horizons)
    : experts_(experts),
      evidence_(spacing.size() * std::size_t(experts), 0.0),
      updated_(spacing.size(), -1) {
  for (long long s : spacing)
    target_weight_.push_back(double(std::max(s, 1LL)) / kUnitSteps / double(std::max(horizons, 1)));
}

std::vector<double> ForecastCombination::weights(int run) const {
  std::vector<double> e(evidence_.begin() + long(at(run)), evidence_.begin() + long(at(run + 1)));
  e[0] -= kPrior;
  const double least = *std::min_element(e.begin(), e.end());
  std::vector<double> w(e.size());
  double sum = 0;
  for (std::size_t i = 0; i < e.size(); ++i) sum += w[i] = std::exp(-kRate * (e[i] - least));
  for (double& x : w) x /= sum;
  return w;
}

double ForecastCombination::combine(int run, const std::vector<double>& experts) const {
  const std::vector<double> w = weights(run);
  double sum = 0, weight = 0;
  for (int i = 0; i < experts_; ++i)
    if (std::isfinite(experts[std::size_t(i)]))
      sum += w[std::size_t(i)] * experts[std::size_t(i)], weight += w[std::size_t(i)];
  return weight > 0 ? sum / weight : std::numeric_limits<double>::quiet_NaN();
}

void ForecastCombination::update(int run, long long step, const std::vector<double>& experts,
                                 double target, double scale) {
  if (!std::isfinite(target)) return;
  double* e = &evidence_[at(run)];
  long long& last = updated_[std::size_t(run)];
  const double decay =
      last < 0 ? 1.0 : std::exp(-double(std::max(step - last, 0LL)) / kMemorySteps);
  last = std::max(last, step);
  const double unit = std::isfinite(scale) && scale > 0 ? scale : 1.0;
  for (int i = 0; i < experts_; ++i) {
    const double f = experts[std::size_t(i)];
    const double err = std::isfinite(f) ? std::min(kCap, std::fabs(f - target) / unit) : kCap;
    e[i] = e[i] * decay + target_weight_[std::size_t(run)] * err;
  }
}

}  // namespace hpt::forecast
