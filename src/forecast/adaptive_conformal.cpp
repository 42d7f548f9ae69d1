#include "forecast/adaptive_conformal.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace hpt::forecast {

namespace {
// theta is kept in [-kThetaLimit, kThetaLimit] (factors e^-20 .. e^20) so one horizon's run of
// misses or hits cannot overflow the factor.
constexpr double kThetaLimit = 20.0;
}  // namespace

AdaptiveConformal::AdaptiveConformal(int horizons, double coverage, double gamma)
    : miss_rate_(1.0 - coverage),
      gamma_(gamma),
      theta_(std::size_t(horizons), 0.0),
      updates_(std::size_t(horizons), 0),
      inside_(std::size_t(horizons), 0) {
  HPT_REQUIRE(horizons >= 0 && coverage > 0 && coverage < 1 && gamma > 0,
              "AdaptiveConformal: needs coverage in (0, 1) and gamma > 0");
}

Interval AdaptiveConformal::apply(int k, double q05, double q50, double q95) const {
  const double w = width_factor(k);
  return Interval{q50 - w * (q50 - q05), q50, q50 + w * (q95 - q50)};
}

void AdaptiveConformal::update(int k, bool inside) {
  double& theta = theta_[std::size_t(k)];
  theta += gamma_ * ((inside ? 0.0 : 1.0) - miss_rate_);
  theta = std::fmax(-kThetaLimit, std::fmin(kThetaLimit, theta));
  updates_[std::size_t(k)] += 1;
  inside_[std::size_t(k)] += inside ? 1 : 0;
}

double AdaptiveConformal::width_factor(int k) const {
  return std::exp(theta_[std::size_t(k)]);
}

AdaptiveConformal::State AdaptiveConformal::state(int k) const {
  return {theta_[std::size_t(k)], updates_[std::size_t(k)], inside_[std::size_t(k)]};
}

void AdaptiveConformal::restore(int k, const State& s) {
  theta_[std::size_t(k)] = s.theta;
  updates_[std::size_t(k)] = int(s.updates);
  inside_[std::size_t(k)] = int(s.inside);
}

double AdaptiveConformal::realised_coverage(int k) const {
  const int n = updates_[std::size_t(k)];
  return n == 0 ? std::numeric_limits<double>::quiet_NaN()
                : double(inside_[std::size_t(k)]) / double(n);
}

}  // namespace hpt::forecast
