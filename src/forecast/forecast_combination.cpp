#include "forecast/forecast_combination.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hpt::forecast {

ForecastCombination::ForecastCombination(int groups, int horizons, int experts, int prior_expert)
    : horizons_(horizons),
      experts_(experts),
      error_(std::size_t(groups * horizons * experts), kPrior) {
  for (int g = 0; g < groups; ++g)
    for (int k = 0; k < horizons; ++k) error_[at(g, k) + std::size_t(prior_expert)] = 0;
}

std::vector<double> ForecastCombination::weights(int group, int k) const {
  const double* e = &error_[at(group, k)];
  const double least = *std::min_element(e, e + experts_);
  std::vector<double> w(static_cast<std::size_t>(experts_));
  double sum = 0;
  for (int i = 0; i < experts_; ++i) sum += w[std::size_t(i)] = std::exp(-kRate * (e[i] - least));
  for (double& x : w) x /= sum;
  return w;
}

double ForecastCombination::combine(int group, int k, const std::vector<double>& experts) const {
  const std::vector<double> w = weights(group, k);
  double sum = 0, weight = 0;
  for (int i = 0; i < experts_; ++i)
    if (std::isfinite(experts[std::size_t(i)]))
      sum += w[std::size_t(i)] * experts[std::size_t(i)], weight += w[std::size_t(i)];
  return weight > 0 ? sum / weight : std::numeric_limits<double>::quiet_NaN();
}

void ForecastCombination::update(int group, int k, const std::vector<double>& experts,
                                 double target) {
  double* e = &error_[at(group, k)];
  for (int i = 0; i < experts_; ++i) {
    const double f = experts[std::size_t(i)];
    e[i] += std::isfinite(f) ? std::min(1.0, std::fabs(f - target)) : 1.0;
  }
}

}  // namespace hpt::forecast
