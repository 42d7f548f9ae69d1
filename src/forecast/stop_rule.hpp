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
// kBoth: stopped when its forecast final median and its current level both lie above the
// forecast.stop_quantile quantile of the other runs' (a run that either still ranks well is kept:
// the forecast and the level disagree about the runs that cross late).
enum class StopRule { kProbability, kMedian, kBoth };

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

inline const char* stop_rule_name(StopRule rule) {
  return rule == StopRule::kMedian ? "median" : rule == StopRule::kBoth ? "both" : "probability";
}

// What a judged run's verdict reads at its judgment origin (NaN where unknown: a comparison with
// NaN never stops).
struct StopEvidence {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double beat_probability = kNaN;
  double final_mid = kNaN;              // the run's forecast final median
  double others_median = kNaN;          // the median of the other runs' forecast final medians
  double others_final_quantile = kNaN;  // their forecast.stop_quantile quantile
  double level = kNaN;                  // the run's current level (log mean of the newest 10)
  double others_level_quantile = kNaN;  // the other runs' current levels' quantile
};

inline bool stop_verdict(StopRule rule, const StopEvidence& e, double below_probability) {
  if (rule == StopRule::kBoth)
    return e.final_mid > e.others_final_quantile && e.level > e.others_level_quantile;
  if (e.beat_probability < below_probability) return true;
  return rule == StopRule::kMedian && e.final_mid > e.others_median;
}

}  // namespace hpt::forecast
