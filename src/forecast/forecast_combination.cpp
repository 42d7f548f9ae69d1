#include "forecast/forecast_combination.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hpt::forecast {

ForecastCombination::ForecastCombination(const std::vector<long long>& spacing, int experts,
                                         const std::vector<int>& horizons,
                                         const std::vector<double>& clock)
    : experts_(experts),
      horizons_(std::max(int(horizons.size()), 1)),
      evidence_(spacing.size() * std::size_t(experts_ * horizons_), 0.0),
      updated_(spacing.size(), -1) {
  for (std::size_t r = 0; r < spacing.size(); ++r) {
    const double c = r < clock.size() ? clock[r] : 1.0;
    target_weight_.push_back(double(std::max(spacing[r], 1LL)) /
                             (kUnitSteps * std::max(c, kMinWeightClock)) / double(horizons_));
    for (int j = 0; j < horizons_; ++j)
      memory_.push_back(horizons.empty() ? c * kMemorySteps
                                         : memory_steps(horizons[std::size_t(j)], c));
  }
}

std::vector<double> ForecastCombination::weights(int run, int k) const {
  std::vector<double> pooled(std::size_t(experts_), 0.0), own(std::size_t(experts_), 0.0);
  for (int j = 0; j < horizons_; ++j)
    for (int i = 0; i < experts_; ++i) {
      const double e = evidence_[at(run, j) + std::size_t(i)];
      pooled[std::size_t(i)] += e;
      if (j == k) own[std::size_t(i)] = e;
    }
  pooled[0] -= kPrior;
  const double least = *std::min_element(pooled.begin(), pooled.end());
  const double least_own = *std::min_element(own.begin(), own.end());
  std::vector<double> w(pooled.size());
  double sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    sum += w[i] =
        std::exp(-kRate * (pooled[i] - least)) * (least_own + kRatioFloor) / (own[i] + kRatioFloor);
  for (double& x : w) x /= sum;
  return w;
}

double ForecastCombination::combine(int run, int k, const std::vector<double>& experts) const {
  const std::vector<double> w = weights(run, k);
  double sum = 0, weight = 0;
  for (int i = 0; i < experts_; ++i)
    if (std::isfinite(experts[std::size_t(i)]))
      sum += w[std::size_t(i)] * experts[std::size_t(i)], weight += w[std::size_t(i)];
  return weight > 0 ? sum / weight : std::numeric_limits<double>::quiet_NaN();
}

void ForecastCombination::update(int run, int k, long long step, const std::vector<double>& experts,
                                 double target, double scale) {
  if (!std::isfinite(target)) return;
  long long& last = updated_[std::size_t(run)];
  const double elapsed = last < 0 ? 0.0 : double(std::max(step - last, 0LL));
  last = std::max(last, step);
  for (int j = 0; j < horizons_; ++j) {
    const double decay = std::exp(-elapsed / memory_[std::size_t(run * horizons_ + j)]);
    for (int i = 0; i < experts_; ++i) evidence_[at(run, j) + std::size_t(i)] *= decay;
  }
  const double unit = std::isfinite(scale) && scale > 0 ? scale : 1.0;
  const bool any = std::any_of(experts.begin(), experts.begin() + experts_,
                               [](double f) { return std::isfinite(f); });
  double* e = &evidence_[at(run, k)];
  for (int i = 0; i < experts_; ++i) {
    const double f = experts[std::size_t(i)];
    const double err =
        std::isfinite(f) ? std::min(kCap, std::fabs(f - target) / unit) : (any ? kMissing : kCap);
    e[i] += target_weight_[std::size_t(run)] * err;
  }
}

}  // namespace hpt::forecast
