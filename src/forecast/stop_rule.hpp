#pragma once
// How a sweep's stop list stops a judged run (forecast.stop_rule; docs/method.md#stopping-runs),
// shared by forecast mode and the live watch so that both judge alike.
#include <cmath>

namespace hpt::forecast {

// kProbability: stopped when its probability of beating the best other run of its group is below
// 1 - forecast.stop_confidence. kMedian: also when its forecast final median lies above the median
// of the other runs' (Optuna's median pruner applied to forecast final levels, not current ones).
enum class StopRule { kProbability, kMedian };

// What the judged run's final interval is set against (forecast.stop_against): kMedian, the best
// other run's forecast final median; kInterval, that run's forecast interval too (the probability
// that the judged run ends below it, both forecasts independent), so that a wildly uncertain
// forecast of another run does not stop the rest.
enum class StopAgainst { kMedian, kInterval };

inline bool stop_verdict(StopRule rule, double beat_probability, double below_probability,
                         double final_mid, double others_median) {
  if (beat_probability < below_probability) return true;
  return rule == StopRule::kMedian && final_mid > others_median;  // false where either is NaN
}

}  // namespace hpt::forecast
