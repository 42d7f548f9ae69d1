#include "forecast/adaptive_conformal.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "core/error.hpp"

namespace hpt::forecast {

namespace {
// theta is kept in [-kThetaLimit, kThetaLimit] (factors e^-20 .. e^20) so one horizon's run of
// misses or hits cannot overflow the factor.
constexpr double kThetaLimit = 20.0;
}  // namespace

CalibrationRule calibration_rule(const std::string& name) {
  if (name == "quantile") return CalibrationRule::kQuantile;
  HPT_REQUIRE(name == "scale", "calibration_rule: unknown rule " + name);
  return CalibrationRule::kScale;
}

double conformal_score(double target, double q05, double q50, double q95) {
  const double excess = target > q50 ? target - q50 : q50 - target;
  const double half = target > q50 ? q95 - q50 : q50 - q05;
  if (!(excess > 0)) return 0.0;
  return half > 0 ? std::fmin(excess / half, kMaxScore) : std::numeric_limits<double>::quiet_NaN();
}

AdaptiveConformal::AdaptiveConformal(int horizons, CalibrationRule rule, double coverage,
                                     double gamma, int window)
    : rule_(rule),
      miss_rate_(1.0 - coverage),
      gamma_(gamma),
      window_(window),
      level_(std::size_t(horizons), rule == CalibrationRule::kQuantile ? 1.0 - coverage : 0.0),
      updates_(std::size_t(horizons), 0),
      inside_(std::size_t(horizons), 0),
      scores_(std::size_t(horizons), std::vector<double>(std::size_t(window), 0.0)),
      factor_(std::size_t(horizons), 1.0) {
  HPT_REQUIRE(horizons >= 0 && coverage > 0 && coverage < 1 && gamma > 0 && window > 0,
              "AdaptiveConformal: needs coverage in (0, 1), gamma > 0 and window > 0");
}

Interval widen(double w, double q05, double q50, double q95) {
  return Interval{q50 - w * (q50 - q05), q50, q50 + w * (q95 - q50)};
}

Interval with_both_halves(Interval raw, double fallback_lo, double fallback_hi) {
  double lo_half = raw.mid - raw.lo, hi_half = raw.hi - raw.mid;
  if (lo_half > 0 && hi_half > 0) return raw;
  if (!(lo_half > 0) && !(hi_half > 0)) lo_half = fallback_lo, hi_half = fallback_hi;
  if (lo_half > 0 && !(hi_half > 0)) hi_half = lo_half;
  if (hi_half > 0 && !(lo_half > 0)) lo_half = hi_half;
  if (!(lo_half > 0)) return raw;
  return {raw.mid - lo_half, raw.mid, raw.mid + hi_half};
}

Interval AdaptiveConformal::apply(int k, double q05, double q50, double q95) const {
  return widen(width_factor(k), q05, q50, q95);
}

void AdaptiveConformal::update(int k, bool inside, double score) {
  update_batch(k, {char(inside)}, {score});
}

void AdaptiveConformal::update_batch(int k, const std::vector<char>& inside,
                                     const std::vector<double>& scores) {
  HPT_REQUIRE(inside.size() == scores.size(), "AdaptiveConformal::update_batch: sizes differ");
  if (inside.empty()) return;
  const std::size_t i = std::size_t(k);
  double misses = 0;
  for (std::size_t j = 0; j < inside.size(); ++j) {
    const double err = inside[j] ? 0.0 : 1.0;
    misses += err;
    if (rule_ == CalibrationRule::kScale)
      level_[i] =
          std::fmax(-kThetaLimit, std::fmin(kThetaLimit, level_[i] + gamma_ * (err - miss_rate_)));
    scores_[i][std::size_t(updates_[i] % window_)] = scores[j];
    updates_[i] += 1;
    inside_[i] += inside[j] ? 1 : 0;
  }
  if (rule_ == CalibrationRule::kQuantile)
    level_[i] = std::fmax(
        0.0, std::fmin(1.0, level_[i] + gamma_ * (miss_rate_ - misses / double(inside.size()))));
  refresh(k);
}

void AdaptiveConformal::refresh(int k) {
  const std::size_t i = std::size_t(k);
  if (rule_ == CalibrationRule::kScale) {
    factor_[i] = std::exp(level_[i]);
    return;
  }
  const long long kept = std::min<long long>(updates_[i], window_);
  std::vector<double> s;
  std::copy_if(scores_[i].begin(), scores_[i].begin() + kept, std::back_inserter(s),
               [](double v) { return !std::isnan(v); });
  const auto n = (long long)s.size();
  if (n == 0) {
    factor_[i] = 1.0;  // no realised target yet: the raw interval
    return;
  }
  // Rank ceil((n + 1)(1 - a)) of the n scores, kept within 1 .. n (above n, where a finite sample
  // cannot reach the level, the largest score).
  const auto rank =
      std::clamp<long long>((long long)std::ceil(double(n + 1) * (1.0 - level_[i]) - 1e-9), 1, n);
  std::nth_element(s.begin(), s.begin() + (rank - 1), s.end());
  factor_[i] = s[std::size_t(rank - 1)];
  // Cold start: a few early hits say little about the next targets, so until the quantile at the
  // nominal coverage is inside the sample the scores may widen the raw interval, never narrow it.
  if (n < cold_start_scores()) factor_[i] = std::max(1.0, factor_[i]);
}

long long AdaptiveConformal::cold_start_scores() const {
  // The smallest n with ceil((n + 1)(1 - m)) <= n: (1 - m) / m, 9 at 90 %.
  return (long long)std::ceil((1.0 - miss_rate_) / miss_rate_ - 1e-9);
}

std::vector<double> AdaptiveConformal::state(int k) const {
  const std::size_t i = std::size_t(k);
  std::vector<double> s{level_[i], double(updates_[i]), double(inside_[i])};
  s.insert(s.end(), scores_[i].begin(), scores_[i].end());
  return s;
}

void AdaptiveConformal::restore(int k, const std::vector<double>& s) {
  HPT_REQUIRE(int(s.size()) == state_size(), "AdaptiveConformal::restore: wrong state size");
  const std::size_t i = std::size_t(k);
  level_[i] = s[0];
  updates_[i] = (long long)s[1];
  inside_[i] = (long long)s[2];
  std::copy(s.begin() + 3, s.end(), scores_[i].begin());
  refresh(k);
}

double AdaptiveConformal::realised_coverage(int k) const {
  const long long n = updates_[std::size_t(k)];
  return n == 0 ? std::numeric_limits<double>::quiet_NaN()
                : double(inside_[std::size_t(k)]) / double(n);
}

}  // namespace hpt::forecast
