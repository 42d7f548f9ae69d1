// The combined forecast's raw interval: the learned interval moved with the combined forecast; a
// half that the crossed quantile regressions left without width takes the other half's width, or
// with neither `last`'s, so that no miss scores the online calibration by the score cap
// (forecast::with_both_halves).
#include <gtest/gtest.h>

#include "forecast/adaptive_conformal.hpp"
#include "forecast/curve_study.hpp"

namespace {

using hpt::forecast::kCombinedSlot;
using hpt::forecast::kLearnedSlot;

// A row whose learned forecast is `mid` in [lo, hi], combined `combined`, last 1.0 in [0.8, 1.5].
hpt::forecast::ForecastRow row_of(double lo, double mid, double hi, double combined) {
  hpt::forecast::ForecastRow row;
  row.base[kLearnedSlot] = mid, row.base_lo[kLearnedSlot] = lo, row.base_hi[kLearnedSlot] = hi;
  row.base[kCombinedSlot] = combined;
  row.base[0] = 1.0, row.base_lo[0] = 0.8, row.base_hi[0] = 1.5;
  return row;
}

}  // namespace

TEST(CombinedInterval, IsTheLearnedIntervalMovedWithTheForecast) {
  const auto iv = hpt::forecast::combined_raw_interval(row_of(-1.5, -1.0, -0.25, -0.75));
  EXPECT_DOUBLE_EQ(iv.mid, -0.75);
  EXPECT_DOUBLE_EQ(iv.lo, -1.25);
  EXPECT_DOUBLE_EQ(iv.hi, 0.0);
}

TEST(CombinedInterval, AHalfWithoutWidthTakesTheOtherHalfs) {
  const auto below = hpt::forecast::combined_raw_interval(row_of(-1.0, -1.0, -0.5, -0.75));
  EXPECT_DOUBLE_EQ(below.lo, -1.25);
  EXPECT_DOUBLE_EQ(below.hi, -0.25);
  const auto above = hpt::forecast::combined_raw_interval(row_of(-2.0, -1.0, -1.0, -1.0));
  EXPECT_DOUBLE_EQ(above.lo, -2.0);
  EXPECT_DOUBLE_EQ(above.hi, 0.0);
}

TEST(CombinedInterval, WithNoWidthEitherSideItTakesLastsHalves) {
  const auto iv = hpt::forecast::combined_raw_interval(row_of(-1.0, -1.0, -1.0, -0.5));
  EXPECT_NEAR(iv.lo, -0.7, 1e-15);
  EXPECT_NEAR(iv.hi, 0.0, 1e-15);
  // A target below or above now scores a finite factor, not the cap.
  EXPECT_LT(hpt::forecast::conformal_score(-2.0, iv.lo, iv.mid, iv.hi), 10.0);
  EXPECT_LT(hpt::forecast::conformal_score(1.0, iv.lo, iv.mid, iv.hi), 10.0);
}

TEST(CombinedInterval, WithoutAFallbackAnIntervalOfNoWidthStaysAsItIs) {
  // The learned forecaster inside training has no `last` interval to fall back on.
  const auto none = hpt::forecast::with_both_halves({2.0, 2.0, 2.0}, 0, 0);
  EXPECT_EQ(none.lo, 2.0);
  EXPECT_EQ(none.hi, 2.0);
  const auto one = hpt::forecast::with_both_halves({1.5, 2.0, 2.0}, 0, 0);
  EXPECT_EQ(one.hi, 2.5);
}
