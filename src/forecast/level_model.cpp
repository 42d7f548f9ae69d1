#include "forecast/level_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "forecast/baselines.hpp"

namespace hpt::forecast {

namespace {

double dot(const std::vector<double>& w, const LevelFeatures& f) {
  double s = 0;
  for (int j = 0; j < kLevelFeatures; ++j) s += w[std::size_t(j)] * f.x[std::size_t(j)];
  return s;
}

// Solves the symmetric positive definite system A x = b (A is F x F, row-major) by Cholesky.
std::vector<double> solve_spd(std::vector<double> A, std::vector<double> b) {
  const int F = int(b.size());
  for (int j = 0; j < F; ++j) {
    double d = A[std::size_t(j * F + j)];
    for (int k = 0; k < j; ++k) d -= A[std::size_t(j * F + k)] * A[std::size_t(j * F + k)];
    HPT_REQUIRE(d > 0, "fit_quantile: the normal equations are not positive definite");
    const double l = std::sqrt(d);
    A[std::size_t(j * F + j)] = l;
    for (int i = j + 1; i < F; ++i) {
      double s = A[std::size_t(i * F + j)];
      for (int k = 0; k < j; ++k) s -= A[std::size_t(i * F + k)] * A[std::size_t(j * F + k)];
      A[std::size_t(i * F + j)] = s / l;
    }
  }
  for (int i = 0; i < F; ++i) {  // L y = b
    for (int k = 0; k < i; ++k) b[std::size_t(i)] -= A[std::size_t(i * F + k)] * b[std::size_t(k)];
    b[std::size_t(i)] /= A[std::size_t(i * F + i)];
  }
  for (int i = F - 1; i >= 0; --i) {  // L^T x = y
    for (int k = i + 1; k < F; ++k)
      b[std::size_t(i)] -= A[std::size_t(k * F + i)] * b[std::size_t(k)];
    b[std::size_t(i)] /= A[std::size_t(i * F + i)];
  }
  return b;
}

// Population std of every feature over the samples (1 for a constant one).
std::vector<double> feature_scales(const std::vector<LevelSample>& samples) {
  const int F = kLevelFeatures;
  std::vector<double> mean(std::size_t(F), 0), var(std::size_t(F), 0);
  for (const LevelSample& s : samples)
    for (int j = 0; j < F; ++j) mean[std::size_t(j)] += s.f.x[std::size_t(j)];
  for (double& m : mean) m /= double(samples.size());
  for (const LevelSample& s : samples)
    for (int j = 0; j < F; ++j)
      var[std::size_t(j)] += std::pow(s.f.x[std::size_t(j)] - mean[std::size_t(j)], 2);
  std::vector<double> scale(static_cast<std::size_t>(F));
  for (int j = 0; j < F; ++j) {
    const double sd = std::sqrt(var[std::size_t(j)] / double(samples.size()));
    scale[std::size_t(j)] = sd > 0 ? sd : 1.0;
  }
  return scale;
}

// The reweighting minimises the pinball loss smoothed within kPinballKink of zero residual
// (log-loss units; residuals are typically 0.01-0.5): strictly convex with the ridge, so it has one
// minimiser, reached to kConverged in the standardised weights whatever the build's rounding.
constexpr double kConverged = 1e-10;

double max_change(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Weighted ridge least squares on the standardised features, the ridge centred on `centre`
// (standardised; empty: zero); returns the standardised weights.
std::vector<double> weighted_ridge(const std::vector<LevelSample>& samples,
                                   const std::vector<double>& scale,
                                   const std::vector<double>& weight, double ridge,
                                   const std::vector<double>& centre) {
  const int F = kLevelFeatures;
  std::vector<double> A(std::size_t(F * F), 0), b(std::size_t(F), 0),
      z(static_cast<std::size_t>(F));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    for (int j = 0; j < F; ++j)
      z[std::size_t(j)] = samples[i].f.x[std::size_t(j)] / scale[std::size_t(j)];
    for (int j = 0; j < F; ++j) {
      const double wz = weight[i] * z[std::size_t(j)];
      b[std::size_t(j)] += wz * samples[i].change;
      for (int k = 0; k <= j; ++k) A[std::size_t(j * F + k)] += wz * z[std::size_t(k)];
    }
  }
  for (int j = 0; j < F; ++j) {
    A[std::size_t(j * F + j)] += ridge;
    if (!centre.empty()) b[std::size_t(j)] += ridge * centre[std::size_t(j)];
    for (int k = j + 1; k < F; ++k) A[std::size_t(j * F + k)] = A[std::size_t(k * F + j)];
  }
  return solve_spd(A, b);
}

// The reweighting of the pinball loss at the standardised weights w: quantile / |residual| (or
// 1 - quantile below), the residual floored at kPinballKink.
void reweight(const std::vector<LevelSample>& samples, const std::vector<double>& scale,
              const std::vector<double>& w, double quantile, std::vector<double>& weight) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    double pred = 0;
    for (int j = 0; j < kLevelFeatures; ++j)
      pred += w[std::size_t(j)] * samples[i].f.x[std::size_t(j)] / scale[std::size_t(j)];
    const double r = samples[i].change - pred;
    weight[i] = (r >= 0 ? quantile : 1 - quantile) / std::max(std::fabs(r), kPinballKink);
  }
}

constexpr double kZ95 = 1.6448536269514722;  // the standard normal's 95 % quantile

}  // namespace

double LevelForecast::probability_below(double b) const {
  const double spread = (b < mid ? mid - lo : hi - mid) / kZ95;
  if (spread <= 0) return b < mid ? 0.0 : (b > mid ? 1.0 : 0.5);
  return 0.5 * std::erfc(-(b - mid) / (spread * std::sqrt(2.0)));
}

namespace {

// The spreads of a forecast's lower and upper half (NaN without an interval).
double spread_lo(const LevelForecast& f) {
  return (f.mid - f.lo) / kZ95;
}
double spread_hi(const LevelForecast& f) {
  return (f.hi - f.mid) / kZ95;
}
bool has_spread(const LevelForecast& f) {
  return !std::isnan(spread_lo(f)) && !std::isnan(spread_hi(f)) &&
         (spread_lo(f) > 0 || spread_hi(f) > 0);
}

// Simpson's rule for the integral of f over [a, b] with n (even) intervals.
template <class F>
double simpson(double a, double b, int n, const F& f) {
  const double h = (b - a) / n;
  double sum = f(a) + f(b);
  for (int i = 1; i < n; ++i) sum += (i % 2 == 1 ? 4.0 : 2.0) * f(a + i * h);
  return sum * h / 3.0;
}

// E g(V) for V under the two-piece normal d, V = mid + spread(z) z with z ~ N(0, 1), z in [-8, 8].
// The integrand has kinks where d's spread changes (z = 0) and where g's does (z = `kink`, the z
// of g's median): each smooth piece gets its own Simpson's rule, about 50 nodes per unit of z.
template <class G>
double expectation(const LevelForecast& d, double kink, const G& g) {
  const auto f = [&](double z) {
    return std::exp(-0.5 * z * z) * 0.3989422804014327 *  // the normal density, 1 / sqrt(2 pi)
           g(d.mid + (z < 0 ? spread_lo(d) : spread_hi(d)) * z);
  };
  double cuts[4] = {-8.0, 0.0, 0.0, 8.0};
  if (kink > -8.0 && kink < 8.0) (kink < 0 ? cuts[1] : cuts[2]) = kink;
  if (cuts[1] > cuts[2]) std::swap(cuts[1], cuts[2]);
  double sum = 0;
  for (int k = 0; k < 3; ++k) {
    const double len = cuts[k + 1] - cuts[k];
    if (len > 0) sum += simpson(cuts[k], cuts[k + 1], 2 * std::max(1, int(std::ceil(25 * len))), f);
  }
  return sum;
}

// The z at which the two-piece normal d reaches v (NaN where that half has no spread).
double z_of(const LevelForecast& d, double v) {
  const double s = v < d.mid ? spread_lo(d) : spread_hi(d);
  return s > 0 ? (v - d.mid) / s : std::nan("");
}

}  // namespace

// Integrated over the narrower of the two forecasts, so that the other's CDF varies slowly on its
// grid.
double LevelForecast::probability_below(const LevelForecast& other) const {
  if (!has_spread(other)) return probability_below(other.mid);
  if (!has_spread(*this)) return 1.0 - other.probability_below(mid);
  const double p =
      spread_lo(*this) + spread_hi(*this) < spread_lo(other) + spread_hi(other)
          ? expectation(*this, z_of(*this, other.mid),
                        [&](double v) { return 1.0 - other.probability_below(v); })
          : expectation(other, z_of(other, mid), [&](double v) { return probability_below(v); });
  return std::min(1.0, std::max(0.0, p));
}

LevelForecast level_forecast(const LevelModel& model, const LevelFeatures& f) {
  LevelForecast out;
  out.mid = f.last + dot(model.median, f);
  out.lo = std::min(out.mid, f.last + dot(model.q05, f));
  out.hi = std::max(out.mid, f.last + dot(model.q95, f));
  return out;
}

LevelForecast level_forecast_ahead(const LevelModel& model, const LevelHistory& hist,
                                   const std::vector<long long>& steps,
                                   const std::vector<double>& lr, long long h) {
  if (h <= kTargetBefore) return {hist.last, hist.last, hist.last};
  const int capped = int(std::min<long long>(h, 1 << 30));
  return level_forecast(model, level_features(hist, steps, lr, capped));
}

namespace {

// The samples of one origin: at every horizon whose target window the run holds, or (to_end) the
// run's final level, `lr` being the run's rates or none.
void origin_samples(const Curve& c, const LevelHistory& hist, const std::vector<double>& lr,
                    const LevelSampling& s, std::vector<LevelSample>& out) {
  if (s.to_end) {
    const long long h = c.steps.back() - hist.t;
    if (h <= kTargetBefore) return;
    LevelSample sample;
    sample.f = level_features(hist, c.steps, lr, int(std::min<long long>(h, 1 << 30)));
    sample.change = forecast_last(c.loss, int(c.loss.size())) - sample.f.last;
    out.push_back(sample);
    return;
  }
  for (int h : s.horizons) {
    const double target = target_log_loss(c.steps, c.loss, hist.t, h);
    if (std::isnan(target)) continue;
    LevelSample sample;
    sample.f = level_features(hist, c.steps, lr, h);
    sample.change = target - sample.f.last;
    sample.horizon = h;
    out.push_back(sample);
  }
}

}  // namespace

std::vector<LevelSample> level_samples(const std::vector<Curve>& runs, const LevelSampling& s) {
  static const std::vector<double> no_lr;
  std::vector<LevelSample> out;
  for (const Curve& c : runs) {
    const int entries = int(c.steps.size());
    const int from = s.to_end ? int(std::ceil(s.end_from * entries)) : 0;
    const int to = s.to_end ? int(std::floor(s.end_to * entries)) : entries;
    int origin = -1, previous = 0;
    for (int e = s.first_origin; e <= to; e += s.every) {
      // A densified run's origins move back to its newest logged entry (each taken once).
      const int n = logged_upto(c, e);
      if (n < s.first_origin || n < from || n == previous) continue;
      previous = n;
      ++origin;
      const bool drop = s.drop_lr_every > 0 && origin % s.drop_lr_every == s.drop_lr_every - 1;
      origin_samples(c, level_history(c.steps, c.loss, n), drop ? no_lr : c.lr, s, out);
    }
  }
  return out;
}

std::vector<double> fit_quantile(const std::vector<LevelSample>& samples, double quantile,
                                 double ridge, int iterations, int* used,
                                 const std::vector<double>* prior) {
  HPT_REQUIRE(!samples.empty(), "fit_quantile: no samples");
  const std::vector<double> scale = feature_scales(samples);
  std::vector<double> weight(samples.size(), 1.0), w, previous, centre;
  if (prior) {  // the prior in standardised coordinates; the reweighting starts from its residuals
    HPT_REQUIRE(prior->size() == std::size_t(kLevelFeatures), "fit_quantile: prior of wrong size");
    for (int j = 0; j < kLevelFeatures; ++j)
      centre.push_back((*prior)[std::size_t(j)] * scale[std::size_t(j)]);
    reweight(samples, scale, centre, quantile, weight);
  }
  int it = 0;
  while (it < iterations) {
    w = weighted_ridge(samples, scale, weight, ridge, centre);
    ++it;
    if (!previous.empty() && max_change(previous, w) < kConverged) break;
    previous = w;
    reweight(samples, scale, w, quantile, weight);
  }
  if (used) *used = it;
  for (int j = 0; j < kLevelFeatures; ++j) w[std::size_t(j)] /= scale[std::size_t(j)];
  return w;
}

LevelModel fit_level_model(const std::vector<LevelSample>& samples, double ridge, int iterations) {
  LevelModel m;
  m.median = fit_quantile(samples, 0.5, ridge, iterations, &m.rounds[0]);
  m.q05 = fit_quantile(samples, 0.05, ridge, iterations, &m.rounds[1]);
  m.q95 = fit_quantile(samples, 0.95, ridge, iterations, &m.rounds[2]);
  m.samples = (long long)samples.size();
  return m;
}

}  // namespace hpt::forecast
