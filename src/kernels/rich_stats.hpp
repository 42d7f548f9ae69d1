#pragma once
// The window statistics of one run from which every rich feature is computed (encode_rich.hpp),
// and the small helpers both ways of computing them share (by a team, team_rich_stats in
// encode_rich.hpp; by one thread per series, rich_series_walk.hpp).
#include <Kokkos_Core.hpp>

#include "core/math.hpp"

namespace hpt {

namespace rich {

constexpr double kLossFloor = 1e-12;  // l = log(max(L, kLossFloor)) (rich_features.hpp)
constexpr double kTiny = 1e-30;       // floor of every other logarithm

// Window statistics of one run (in the team-per-run layout identical on every thread of the team).
struct RichStats {
  int n, ng, nu, nc, nw;  // entries of the loss, gradient, update, cosine and weight rings
  // loss (log)
  double lt, lprev, lfirst;
  double mean8, mean32, mean128, std8, std32, std128, slope8, slope32, slope128;
  double ema4, ema16, ema64, best, min128, max128, inc_frac32, abs_delta32;
  // gradient: log unless noted
  double g_t, lg_t, gmean8, gmean32, gstd8, gstd32, gslope8, gslope32, gema16_linear;
  double gmin32, gmax32, gcv32_linear, ginc_frac32;
  // update, cosine, weight
  double lu_t, uslope8, uema16_linear, c_t, cmean8, cmean32, lw_t, wslope32;
};

KOKKOS_INLINE_FUNCTION double safe_log(double x, double floor) {
  return math::log(math::max(x, floor));
}

KOKKOS_INLINE_FUNCTION int window(int w, int n) {
  return n < w ? n : w;
}

// Least-squares slope of a window of w entries from its numerator sum (x - xbar)(y - ybar).
KOKKOS_INLINE_FUNCTION double slope(double numerator, int w) {
  if (w < 2) return 0.0;
  const double sxx = double(w) * (double(w) * double(w) - 1.0) / 12.0;
  return numerator / sxx;
}

// A sum over a window of `den` entries as a mean; 0 for an empty window.
KOKKOS_INLINE_FUNCTION double ratio(double num, int den) {
  return den > 0 ? num / double(den) : 0.0;
}

// Position of an entry of age `age` inside a window of w entries minus the mean position.
KOKKOS_INLINE_FUNCTION double centred_x(int age, int w) {
  return double(w - 1 - age) - 0.5 * double(w - 1);
}

// The moments of one window of the newest w entries of a series, in one pass: each entry enters as
// d = x - K around a shift K (the series' newest value, so the sums stay small and the variance
// does not cancel), s1 = sum d, s2 = sum d^2 and p = sum centred_x(age) d. As the centred positions
// sum to 0, p is the slope's numerator without the mean.
struct WindowMoments {
  int w = 0;
  double s1 = 0.0, s2 = 0.0, p = 0.0;

  KOKKOS_INLINE_FUNCTION explicit WindowMoments(int entries) : w(entries) {}
  KOKKOS_INLINE_FUNCTION void add(int age, double d) {
    if (age < w) add_inside(age, d);
  }
  // add for an entry known to be inside the window (age < w).
  KOKKOS_INLINE_FUNCTION void add_inside(int age, double d) {
    s1 += d;
    s2 += d * d;
    p += centred_x(age, w) * d;
  }
  KOKKOS_INLINE_FUNCTION double mean(double shift) const { return w > 0 ? shift + s1 / w : 0.0; }
  // Population standard deviation; 0 for an empty window.
  KOKKOS_INLINE_FUNCTION double std_dev() const {
    if (w == 0) return 0.0;
    const double m = s1 / w, v = s2 / w - m * m;
    return math::sqrt(v > 0.0 ? v : 0.0);
  }
  KOKKOS_INLINE_FUNCTION double least_squares_slope() const { return slope(p, w); }
};

}  // namespace rich

}  // namespace hpt
