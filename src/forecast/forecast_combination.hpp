#pragma once
// The combined forecast (docs/method.md#combined-forecast): a guard on the learned level forecast,
// run by run. Per run, an exponentially weighted average of experts (learned, last, loglin and
// power, forecast/power_guard.hpp), each weighted by exp(-rate * its evidence), where the evidence
// is its recent absolute error on the run's realised targets of every horizon, in units of the
// learned 90 % interval's width (capped; an expert without a value counts kMissing while another
// has one), forgotten with an e-folding of kMemorySteps steps, kLongMemorySteps for the evidence of
// horizons of kLongHorizonSteps and more (the learned expert starts with a head start); on a run
// where a simple expert keeps beating the learned one (a smooth curve that `loglin` extrapolates, a
// memorising run that `last` holds, a noisy one whose level the power law of the whole history
// reads best), the weight moves to that expert within a few hundred steps. An expert without a
// value (NaN) is left out of the mean. Each horizon's weights are further multiplied by the ratio
// of the least error of any expert at that horizon to the expert's own (plus a floor), so that on a
// smooth curve, where every error is a small fraction of the interval's width, the expert whose
// errors are several times smaller still takes the weight. Every time constant is in steps of a
// run of kReferenceSteps; a run's clock (its planned length over that) scales them, so that a run
// logged at 80 points forgets its evidence as a 2000-step run does (and weighs each target more,
// at most 1 / kMinWeightClock times).
#include <vector>

namespace hpt::forecast {

class ForecastCombination {
 public:
  static constexpr double kRate = 1.0;           // of the exponential weights
  static constexpr double kPrior = 1.0;          // head start of expert 0, in evidence units
  static constexpr double kCap = 2.0;            // one target's error counts at most this much
  static constexpr double kMemorySteps = 200.0;  // evidence decays as exp(-steps / this)
  // Targets this far ahead were forecast from an older phase of the run (a cycle of the rate
  // ago on a cyclic schedule): their evidence is forgotten faster.
  static constexpr int kLongHorizonSteps = 200;
  static constexpr double kLongMemorySteps = 75.0;
  // An expert without a value for a target that another expert forecast: less than the cap, so a
  // guard that has no forecast on part of a run (power's law flat) is not ruled out by it.
  static constexpr double kMissing = 1.0;
  static constexpr double kUnitSteps = 10.0;   // origins this far apart give a target weight 1
  static constexpr double kRatioFloor = 0.01;  // added to each horizon's evidence in the ratio
  static constexpr double kReferenceSteps = 2000.0;  // the run length the constants are set for
  // A target of a short run weighs at most 1 / this times one of a run of kReferenceSteps: heavier
  // evidence from a few noisy points moves the weights after the noise.
  static constexpr double kMinWeightClock = 0.25;
  // With forecast.guard_clamp = length, runs shorter than this times kReferenceSteps keep their
  // guards free of the learned interval.
  static constexpr double kMinClampClock = 0.25;
  // With forecast.guard_clamp = trend, such a run's `loglin` is free only where its slope is at
  // least this many standard errors from zero.
  static constexpr double kTrendSignificance = 3.0;

  // `spacing`: each run's steps between two origins; `experts`: how many, the learned one first;
  // `horizons`: the horizons (steps) that share the evidence. A target weighs (spacing /
  // kUnitSteps) / (number of horizons), so the weights do not depend on the cadence of the origins.
  // `clock`: per run, the factor of every time constant (empty: 1 for every run).
  ForecastCombination(const std::vector<long long>& spacing, int experts,
                      const std::vector<int>& horizons, const std::vector<double>& clock = {});

  // The e-folding of the evidence of a horizon of h steps on a run whose clock is `clock`.
  static double memory_steps(int h, double clock = 1.0) {
    return clock * (h >= kLongHorizonSteps * clock ? kLongMemorySteps : kMemorySteps);
  }

  // The weighted mean of the finite forecasts among `experts` for horizon `k` (NaN when none is
  // finite).
  double combine(int run, int k, const std::vector<double>& experts) const;
  // A target of `run` at horizon `k` realised at `step`: the run's evidence of each horizon decays
  // to that step, then each expert's absolute error over `scale` (the learned interval's width; 1
  // when it has none), capped, joins horizon k's (kMissing for an expert without a value while
  // another has one, else the cap).
  void update(int run, int k, long long step, const std::vector<double>& experts, double target,
              double scale);
  // The current weights for horizon `k`, normalised over the experts: exp(-rate * (pooled evidence
  // - head start)) times (least evidence at k + floor) / (own evidence at k + floor).
  std::vector<double> weights(int run, int k) const;

 private:
  std::size_t at(int run, int k) const { return std::size_t((run * horizons_ + k) * experts_); }
  int experts_;
  int horizons_;
  std::vector<double> target_weight_;  // per run
  std::vector<double> memory_;      // per (run, horizon): the e-folding of its evidence, in steps
  std::vector<double> evidence_;    // (run, horizon, expert), decayed to the run's last update
  std::vector<long long> updated_;  // the step of each run's last update (-1: none yet)
};

}  // namespace hpt::forecast
