#include "forecast/sweep_half_floor.hpp"

#include <algorithm>
#include <cmath>

namespace hpt::forecast {

double median_half_width(const std::vector<Interval>& raws) {
  std::vector<double> halves;
  for (const Interval& iv : raws)
    for (const double half : {iv.mid - iv.lo, iv.hi - iv.mid})
      if (std::isfinite(half) && half > 0) halves.push_back(half);
  if (halves.empty()) return 0.0;
  const std::size_t n = halves.size(), m = n / 2;
  std::nth_element(halves.begin(), halves.begin() + std::ptrdiff_t(m), halves.end());
  if (n % 2 == 1) return halves[m];
  const double upper = halves[m];
  return 0.5 * (upper + *std::max_element(halves.begin(), halves.begin() + std::ptrdiff_t(m)));
}

Interval with_floored_halves(Interval raw, double floor) {
  if (!(floor > 0)) return raw;
  return {std::min(raw.lo, raw.mid - floor), raw.mid, std::max(raw.hi, raw.mid + floor)};
}

}  // namespace hpt::forecast
