#pragma once
// The combined forecast (docs/method.md#combined-forecast): per group of runs and horizon, an
// exponentially weighted average of the experts' log-loss forecasts (hpt's ensemble, last, loglin,
// power, law), each weighted by exp(-rate * its cumulative absolute error, capped at 1 per target)
// over the targets realised so far. For losses in [0, 1] such an average has a cumulative error at
// most that of the best expert plus ln(experts) / rate + rate * targets / 8 (Cesa-Bianchi and
// Lugosi 2006, thm. 2.2): it degrades to the best expert, whichever it is, and never needs to know
// which in advance. Before any target, `last` carries the weight (a prior head start).
#include <vector>

namespace hpt::forecast {

class ForecastCombination {
 public:
  static constexpr double kRate = 4.0;   // of the exponential weights
  static constexpr double kPrior = 1.0;  // head start of the prior expert, in capped error units

  ForecastCombination(int groups, int horizons, int experts, int prior_expert);

  // The weighted mean of the finite forecasts among `experts` (NaN when none is finite).
  double combine(int group, int k, const std::vector<double>& experts) const;
  // A realised target: each expert's capped absolute error joins its cumulative error.
  void update(int group, int k, const std::vector<double>& experts, double target);
  // The current weights (for reports), normalised over the experts.
  std::vector<double> weights(int group, int k) const;

 private:
  std::size_t at(int group, int k) const { return std::size_t((group * horizons_ + k) * experts_); }
  int horizons_, experts_;
  std::vector<double> error_;  // (group, horizon, expert) cumulative capped absolute error
};

}  // namespace hpt::forecast
