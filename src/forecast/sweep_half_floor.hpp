#pragma once
// The floor under the half-widths of the raw intervals that a sweep's runs share one calibration
// for. A width factor scales every run's raw interval alike, so a few runs whose learned interval
// is far too narrow (early in short runs, or where the quantile regressions nearly cross) leave
// scores in the hundreds and widen every run's interval of that horizon as much. Normalised
// conformal scores are robust to that when the normaliser is floored: here no half is narrower than
// the median half-width of the sweep's raw intervals made at the same origin and horizon.
#include <vector>

#include "forecast/adaptive_conformal.hpp"

namespace hpt::forecast {

// The median of the positive, finite half-widths (mid - lo and hi - mid) of `raws`; 0 without any.
double median_half_width(const std::vector<Interval>& raws);

// `raw` with each half at least `floor` wide around its mid.
Interval with_floored_halves(Interval raw, double floor);

}  // namespace hpt::forecast
