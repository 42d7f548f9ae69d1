#pragma once
// The combined forecast (docs/method.md#combined-forecast): a guard on the learned level forecast,
// run by run. Per run, an exponentially weighted average of three experts (learned, last, loglin),
// each weighted by exp(-rate * its evidence), where the evidence is its recent absolute error on
// the run's realised targets of every horizon, in units of the learned 90 % interval's width
// (capped), forgotten with an e-folding of kMemorySteps steps. The learned expert starts with a
// head start; on a run where a simple expert keeps beating it (a smooth curve that `loglin`
// extrapolates, a memorising run that `last` holds), the weight moves to that expert within a few
// hundred steps.
#include <vector>

namespace hpt::forecast {

class ForecastCombination {
 public:
  static constexpr double kRate = 1.0;           // of the exponential weights
  static constexpr double kPrior = 1.0;          // head start of expert 0, in evidence units
  static constexpr double kCap = 2.0;            // one target's error counts at most this much
  static constexpr double kMemorySteps = 200.0;  // evidence decays as exp(-steps / this)
  static constexpr double kUnitSteps = 10.0;     // origins this far apart give a target weight 1

  // `spacing`: each run's steps between two origins; `horizons`: how many horizons share the
  // evidence. A target weighs (spacing / kUnitSteps) / horizons, so the weights do not depend on
  // the cadence of the origins.
  ForecastCombination(const std::vector<long long>& spacing, int experts, int horizons);

  // The weighted mean of the finite forecasts among `experts` (NaN when none is finite).
  double combine(int run, const std::vector<double>& experts) const;
  // A target of `run` realised at `step`: the evidence decays to that step, then each expert's
  // absolute error over `scale` (the learned interval's width; 1 when it has none), capped, joins
  // it.
  void update(int run, long long step, const std::vector<double>& experts, double target,
              double scale);
  // The current weights (for reports), normalised over the experts.
  std::vector<double> weights(int run) const;

 private:
  std::size_t at(int run) const { return std::size_t(run * experts_); }
  int experts_;
  std::vector<double> target_weight_;  // per run
  std::vector<double> evidence_;       // (run, expert), decayed to the run's last update
  std::vector<long long> updated_;     // the step of each run's last update (-1: none yet)
};

}  // namespace hpt::forecast
