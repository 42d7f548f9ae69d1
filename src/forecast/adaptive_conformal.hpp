#pragma once
// Online calibration of forecast intervals, per horizon: adaptive conformal inference (Gibbs and
// Candes, 2021). Each horizon keeps a width factor w that scales the half-widths of the predicted
// interval around its median,
//   [q50 - w (q50 - q05), q50 + w (q95 - q50)].
// Two rules set w (`forecast.calibration`):
// * quantile (default): every realised target leaves a score, the factor that would just have
//   covered it; w is the rank ceil((n + 1)(1 - a)) of the newest n <= window scores, and the level
//   a follows a <- a + gamma (miss_rate - err) per step with realised targets (err = the fraction
//   of that step's targets that fell outside the interval that was issued). This is the original
//   form of the method: a split-conformal quantile whose level adapts to drift. It needs about 1 /
//   miss_rate scores to be near the target coverage; with fewer (the cold start) w is the largest
//   score but at least 1: the raw interval is widened, never narrowed.
// * scale: w = exp(theta), theta <- theta + gamma (err - miss_rate). Misses widen, hits narrow;
//   over T updates the miss rate differs from miss_rate by at most |theta_T - theta_0| / (gamma T),
//   so it converges only over many scored forecasts.
#include <string>
#include <vector>

namespace hpt::forecast {

struct Interval {
  double lo = 0, mid = 0, hi = 0;
};

// The raw interval (q05, q50, q95) with its half-widths scaled by w around the median.
Interval widen(double w, double q05, double q50, double q95);

// `raw` with a half of no width (crossed quantile regressions) given the other half's width, or,
// with neither, the half-widths fallback_lo and fallback_hi (where positive). A miss on a side
// without width has no conformal score (conformal_score), so such a forecast cannot calibrate.
Interval with_both_halves(Interval raw, double fallback_lo, double fallback_hi);

enum class CalibrationRule { kQuantile, kScale };
// "quantile" or "scale"; anything else is a programming error (the deck schema checks it).
CalibrationRule calibration_rule(const std::string& name);

// The width factor that would just have covered `target` with the raw interval (q05, q50, q95),
// bounded by kMaxScore; NaN for a miss on a side without width, which no factor can cover: such a
// score is kept out of the quantile (a short run's crossed quantiles would otherwise put the cap
// into a tenth of a sweep's scores and widen every interval of the horizon a millionfold).
double conformal_score(double target, double q05, double q50, double q95);
constexpr double kMaxScore = 1e6;

class AdaptiveConformal {
 public:
  AdaptiveConformal(int horizons, CalibrationRule rule, double coverage = 0.90, double gamma = 0.05,
                    int window = 200);

  // The calibrated interval of horizon index k from the raw quantiles (q05, q50, q95).
  Interval apply(int k, double q05, double q50, double q95) const;
  // One realised target of horizon k: `inside` of the calibrated interval that was issued, and
  // its score (conformal_score of the raw interval that was issued; NaN counts for the realised
  // coverage and the level, not for the quantile).
  void update(int k, bool inside, double score);
  // The targets of horizon k that became known at the same step (one per run of a sweep): the
  // quantile rule moves its level once, by the batch's fraction of misses, since targets of one
  // step are not independent evidence; the scale rule takes them one by one.
  void update_batch(int k, const std::vector<char>& inside, const std::vector<double>& scores);

  double width_factor(int k) const { return factor_[std::size_t(k)]; }
  long long updates(int k) const { return updates_[std::size_t(k)]; }
  // Fraction of the realised targets of horizon k that fell inside (NaN before the first).
  double realised_coverage(int k) const;
  int horizons() const { return int(level_.size()); }
  // Scores the quantile rule needs before it may narrow the raw interval: (1 - m) / m, 9 at 90 %.
  long long cold_start_scores() const;

  // The state of horizon k as numbers, for checkpoints: level (a or theta), updates, inside, then
  // the score ring (`window` entries; entry updates % window is the next to be overwritten).
  int state_size() const { return 3 + window_; }
  std::vector<double> state(int k) const;
  void restore(int k, const std::vector<double>& s);

 private:
  void refresh(int k);  // recomputes factor_[k] from the level and the scores

  CalibrationRule rule_;
  double miss_rate_;
  double gamma_;
  int window_;
  std::vector<double> level_;
  std::vector<long long> updates_, inside_;
  std::vector<std::vector<double>> scores_;
  std::vector<double> factor_;
};

}  // namespace hpt::forecast
