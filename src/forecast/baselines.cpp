#include "forecast/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hpt::forecast {

namespace {

double log_loss(double L) {
  return std::log(std::max(L, kMinLoss));
}

// Weighted least squares of L = a + b x with weights w, a, b >= 0. Returns false when no
// non-negative fit with a + b x > 0 exists.
bool constrained_fit(const std::vector<double>& x, const std::vector<double>& L,
                     const std::vector<double>& w, double& a, double& b) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * L[i];
    sxx += w[i] * x[i] * x[i];
    sxy += w[i] * x[i] * L[i];
  }
  const double det = sw * sxx - sx * sx;
  if (det > 1e-300 * std::max(1.0, sw * sxx)) {
    a = (sxx * sy - sx * sxy) / det;
    b = (sw * sxy - sx * sy) / det;
    if (a >= 0 && b >= 0) return a + b > 0;
  }
  // Boundaries: b = 0 (a = weighted mean) or a = 0 (b through the origin); keep the smaller
  // weighted residual.
  auto rss = [&](double aa, double bb) {
    double r = 0;
    for (std::size_t i = 0; i < x.size(); ++i) r += w[i] * std::pow(L[i] - aa - bb * x[i], 2);
    return r;
  };
  const double a0 = sw > 0 ? std::max(0.0, sy / sw) : 0.0;
  const double b1 = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
  if (rss(a0, 0) <= rss(0, b1)) {
    a = a0;
    b = 0;
  } else {
    a = 0;
    b = b1;
  }
  return a > 0 || b > 0;
}

// The fit at one exponent c (log-space residual in `fit.log_rss`).
PowerLaw fit_at(const std::vector<double>& log_s, const std::vector<double>& L,
                const std::vector<double>& log_L, const std::vector<double>& w, double c) {
  PowerLaw fit;
  fit.c = c;
  std::vector<double> x(log_s.size());
  for (std::size_t i = 0; i < log_s.size(); ++i) x[i] = std::exp(-c * log_s[i]);
  if (!constrained_fit(x, L, w, fit.a, fit.b)) {
    fit.log_rss = std::numeric_limits<double>::infinity();
    return fit;
  }
  double r = 0;
  for (std::size_t i = 0; i < log_s.size(); ++i) {
    const double d = log_loss(fit.a + fit.b * x[i]) - log_L[i];
    r += d * d;
  }
  fit.log_rss = r;
  fit.ok = std::isfinite(r);
  return fit;
}

}  // namespace

double PowerLaw::operator()(double s) const {
  return a + b * std::pow(s, -c);
}

double target_log_loss(const std::vector<long long>& steps, const std::vector<double>& loss,
                       long long t, int h) {
  const long long first = t + h - kTargetBefore, last = t + h + kTargetAfter;
  const auto it = std::lower_bound(steps.begin(), steps.end(), first);
  const std::size_t i = std::size_t(it - steps.begin());
  const std::size_t count = std::size_t(last - first + 1);
  if (i + count > steps.size() || steps[i] != first || steps[i + count - 1] != last)
    return std::numeric_limits<double>::quiet_NaN();  // steps increase: the ends pin the window
  double sum = 0;
  for (std::size_t k = i; k < i + count; ++k) sum += loss[k];
  return log_loss(sum / double(count));
}

double forecast_last(const std::vector<double>& loss, int n) {
  const int m = std::min(n, kLastWindow);
  double sum = 0;
  for (int i = n - m; i < n; ++i) sum += loss[std::size_t(i)];
  return log_loss(sum / double(m));
}

LogLinLine fit_loglin(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                      int window) {
  const long long t = steps[std::size_t(n - 1)];
  int begin = n - 1;
  while (begin > 0 && steps[std::size_t(begin - 1)] > t - window) --begin;
  const int m = n - begin;
  if (m < 2) return {forecast_last(loss, n), 0.0, 0.0};
  // Centred least squares (steps relative to t keep the sums well conditioned).
  double mx = 0, my = 0;
  for (int i = begin; i < n; ++i) {
    mx += double(steps[std::size_t(i)] - t);
    my += log_loss(loss[std::size_t(i)]);
  }
  mx /= m;
  my /= m;
  double sxx = 0, sxy = 0, syy = 0;
  for (int i = begin; i < n; ++i) {
    const double dx = double(steps[std::size_t(i)] - t) - mx;
    const double dy = log_loss(loss[std::size_t(i)]) - my;
    sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
  }
  const double slope = sxy / sxx;
  // The slope over its standard error sqrt(rss / (m - 2) / sxx), rss = syy - slope sxy.
  const double rss = std::max(syy - slope * sxy, 0.0);
  const double t_stat = m < 4     ? 0.0
                        : rss > 0 ? std::abs(slope) / std::sqrt(rss / double(m - 2) / sxx)
                                  : std::numeric_limits<double>::infinity();
  return {my, mx, slope, t_stat};
}

double forecast_loglin(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                       int h) {
  return fit_loglin(steps, loss, n).at(double(h));
}

PowerLaw fit_power_law(const std::vector<double>& s, const std::vector<double>& L) {
  if (s.size() < 3) return PowerLaw{};
  std::vector<double> w(L.size()), log_L(L.size()), log_s(s.size());
  for (std::size_t i = 0; i < L.size(); ++i) {
    log_s[i] = std::log(s[i]);
    w[i] = 1.0 / std::pow(std::max(L[i], kMinLoss), 2);
    log_L[i] = log_loss(L[i]);
  }
  // Grid in log c, then golden-section search between the best point's neighbours.
  constexpr int kGrid = 60;
  const double lo = std::log(kPowerMinC), hi = std::log(kPowerMaxC);
  auto c_at = [&](int k) { return std::exp(lo + (hi - lo) * k / (kGrid - 1)); };
  PowerLaw best;
  best.log_rss = std::numeric_limits<double>::infinity();
  int best_k = -1;
  for (int k = 0; k < kGrid; ++k) {
    const PowerLaw f = fit_at(log_s, L, log_L, w, c_at(k));
    if (f.ok && f.log_rss < best.log_rss) {
      best = f;
      best_k = k;
    }
  }
  if (best_k < 0) return PowerLaw{};
  double a = c_at(std::max(0, best_k - 1)), b = c_at(std::min(kGrid - 1, best_k + 1));
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 60 && b - a > 1e-10 * b; ++it) {
    const double c1 = b - g * (b - a), c2 = a + g * (b - a);
    const PowerLaw f1 = fit_at(log_s, L, log_L, w, c1), f2 = fit_at(log_s, L, log_L, w, c2);
    if (f1.log_rss < best.log_rss) best = f1;
    if (f2.log_rss < best.log_rss) best = f2;
    if (f1.log_rss <= f2.log_rss)
      b = c2;
    else
      a = c1;
  }
  return best;
}

PowerLaw fit_power_history(const std::vector<long long>& steps, const std::vector<double>& loss,
                           int n) {
  std::vector<double> s, L;
  for (int begin = 0; begin + kPowerBin <= n; begin += kPowerBin) {
    double ms = 0, ml = 0;
    for (int i = begin; i < begin + kPowerBin; ++i) {
      ms += double(steps[std::size_t(i)]) + 1.0;
      ml += loss[std::size_t(i)];
    }
    s.push_back(ms / kPowerBin);
    L.push_back(ml / kPowerBin);
  }
  return fit_power_law(s, L);
}

double forecast_power(const PowerLaw& fit, const std::vector<long long>& steps,
                      const std::vector<double>& loss, int n, int h) {
  if (!fit.ok) return forecast_last(loss, n);
  return log_loss(fit(double(steps[std::size_t(n - 1)] + h) + 1.0));
}

double forecast_power(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                      int h) {
  return forecast_power(fit_power_history(steps, loss, n), steps, loss, n, h);
}

void EmpiricalErrors::add(double signed_error) {
  if (!std::isfinite(signed_error)) return;
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), signed_error), signed_error);
}

void EmpiricalErrors::add_batch(std::vector<double> signed_errors) {
  signed_errors.erase(std::remove_if(signed_errors.begin(), signed_errors.end(),
                                     [](double e) { return !std::isfinite(e); }),
                      signed_errors.end());
  std::sort(signed_errors.begin(), signed_errors.end());
  const std::ptrdiff_t old = std::ptrdiff_t(sorted_.size());
  sorted_.insert(sorted_.end(), signed_errors.begin(), signed_errors.end());
  std::inplace_merge(sorted_.begin(), sorted_.begin() + old, sorted_.end());
}

double EmpiricalErrors::quantile(double p) const {
  const int n = count();
  if (n < kMinErrors) return std::numeric_limits<double>::quiet_NaN();
  const double pos = p * double(n - 1);
  const int i = std::min(n - 2, int(std::floor(pos)));
  const double t = pos - i;
  const double a = sorted_[std::size_t(i)], b = sorted_[std::size_t(i + 1)];
  return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

}  // namespace hpt::forecast
