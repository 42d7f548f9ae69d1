#pragma once
// How a sweep's stop list stops a judged run (forecast.stop_rule; docs/method.md#stopping-runs),
// shared by forecast mode and the live watch so that both judge alike.
#include <cmath>
#include <limits>

#include "forecast/level_model.hpp"

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

// P(the judged run's final level `own` lies below the best other run's `other`), by `against`; an
// `other` without an interval (a run at its end, or not at the origin) is its median either way.
inline double beat_probability(StopAgainst against, const LevelForecast& own,
                               const LevelForecast& other) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  return own.probability_below(
      against == StopAgainst::kInterval ? other : LevelForecast{other.mid, kNaN, kNaN});
}

inline bool stop_verdict(StopRule rule, double beat_probability, double below_probability,
                         double final_mid, double others_median) {
  if (beat_probability < below_probability) return true;
  return rule == StopRule::kMedian && final_mid > others_median;  // false where either is NaN
}

}  // namespace hpt::forecast
