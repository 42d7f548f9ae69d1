#include "forecast/level_features.hpp"

#include <algorithm>
#include <cmath>

#include "forecast/baselines.hpp"

namespace hpt::forecast {

const char* const kLevelFeatureNames[kLevelFeatures] = {"bias",
                                                        "mean50_minus_last",
                                                        "mean200_minus_last",
                                                        "mean50_minus_last_x_logh",
                                                        "trend50",
                                                        "trend200",
                                                        "trend_log_step",
                                                        "noise",
                                                        "noise_x_logh",
                                                        "above_best",
                                                        "anneal",
                                                        "anneal_x_noise",
                                                        "lr_change_x_noise",
                                                        "lr_ahead",
                                                        "lr_ahead_x_trend_log_step",
                                                        "lr_now",
                                                        "lr_at_target",
                                                        "anneal_x_logh",
                                                        "has_lr",
                                                        "logh",
                                                        "log_step",
                                                        "trend50_down",
                                                        "trend_log_step_down",
                                                        "mean20_minus_last",
                                                        "noise200",
                                                        "above_recent50",
                                                        "above_recent100",
                                                        "above_recent200",
                                                        "trend_log_step_all",
                                                        "trend_log_step_quarter",
                                                        "trend50_persistent",
                                                        "trend_log_step_persistent",
                                                        "trend_log_step_all_persistent",
                                                        "loglin_change",
                                                        "loglin_change_x_skill50",
                                                        "loglin_change_x_skill200",
                                                        "loglin_change_x_skill50_x_straight",
                                                        "loglin_change_x_skill200_x_straight"};

namespace {

constexpr double kLoglinChangeCap = 1.0;  // log units
constexpr int kStraightSteps = 400;       // the longer line `straight` compares `loglin`'s with

double sq(double x) {
  return x * x;
}

// Log of the mean loss over entries [lo, hi) (hi > lo).
double log_mean(const std::vector<double>& loss, int lo, int hi) {
  double s = 0;
  for (int i = lo; i < hi; ++i) s += std::max(loss[std::size_t(i)], kMinLoss);
  return std::log(std::max(s / double(hi - lo), kMinLoss));
}

double mean_step(const std::vector<long long>& steps, int lo, int hi) {
  double s = 0;
  for (int i = lo; i < hi; ++i) s += double(steps[std::size_t(i)]);
  return s / double(hi - lo);
}

// Per-step slope between the newest w entries and the w before them (0 with fewer than 2w).
double window_slope(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                    int w) {
  if (n < 2 * w) return 0.0;
  const double dt = mean_step(steps, n - w, n) - mean_step(steps, n - 2 * w, n - w);
  return (log_mean(loss, n - w, n) - log_mean(loss, n - 2 * w, n - w)) / dt;
}

// Least-squares slope of log loss against log(steps since the first + 1) over entries [lo, n).
double log_step_slope(const std::vector<long long>& steps, const std::vector<double>& loss, int lo,
                      int n) {
  double sx = 0, sy = 0;
  for (int i = lo; i < n; ++i) {
    sx += std::log(double(steps[std::size_t(i)] - steps[0]) + 1.0);
    sy += std::log(std::max(loss[std::size_t(i)], kMinLoss));
  }
  const double xm = sx / (n - lo), ym = sy / (n - lo);
  double sxy = 0, sxx = 0;
  for (int i = lo; i < n; ++i) {
    const double x = std::log(double(steps[std::size_t(i)] - steps[0]) + 1.0) - xm;
    sxy += x * (std::log(std::max(loss[std::size_t(i)], kMinLoss)) - ym);
    sxx += x * x;
  }
  return sxx > 0 ? sxy / sxx : 0.0;
}

// Population std of the change of log loss over the newest `window` entries, over sqrt 2: the
// noise of one entry when its neighbours are independent.
double step_noise(const std::vector<double>& loss, int n, int window) {
  if (n <= 5) return 0.0;
  const int lo = std::max(0, n - window);
  std::vector<double> d;
  for (int i = lo + 1; i < n; ++i)
    d.push_back(std::log(std::max(loss[std::size_t(i)], kMinLoss)) -
                std::log(std::max(loss[std::size_t(i - 1)], kMinLoss)));
  double m = 0, v = 0;
  for (double x : d) m += x;
  m /= double(d.size());
  for (double x : d) v += (x - m) * (x - m);
  return std::sqrt(v / double(d.size())) / std::sqrt(2.0);
}

// The lowest log mean of the blocks of 10 entries starting at 0, 10, 20, ... (the first block
// holds fewer when n < 10).
double best_block(const std::vector<double>& loss, int n) {
  double best = log_mean(loss, 0, std::min(10, n));
  for (int j = 10; j + 10 <= n; j += 10) best = std::min(best, log_mean(loss, j, j + 10));
  return best;
}

// The lowest log mean of the blocks of 10 entries [n-10, n), [n-20, n-10), ... inside the newest
// `window` entries (the newest block alone when n < 10 or window < 20 would leave none).
double lowest_recent_block(const std::vector<double>& loss, int n, int window) {
  const int lo = std::max(0, n - window);
  double best = log_mean(loss, std::max(0, n - 10), n);
  for (int j = n - 20; j >= lo; j -= 10) best = std::min(best, log_mean(loss, j, j + 10));
  return best;
}

// Entries with step <= s among the first n.
int entries_through(const std::vector<long long>& steps, int n, long long s) {
  return int(std::upper_bound(steps.begin(), steps.begin() + n, s) - steps.begin());
}

// How far a recent slope a goes on as an older one b did: a·b / max(a², b²), in [0, 1] (0 when
// they differ in sign or both are 0; 1 when they are equal).
double persistence(double a, double b) {
  const double m = std::max(a * a, b * b);
  return m > 0 ? std::max(a * b / m, 0.0) : 0.0;
}

// `loglin`'s skill against `last` at forecasting the level `lag` steps ahead, backtested on the
// run's own history from four origins lag, 5/4 lag, 6/4 lag and 7/4 lag steps before the newest
// entry (each with at least 20 entries); 0 when none qualifies or both are exact.
double loglin_skill(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                    long long lag) {
  const long long t = steps[std::size_t(n - 1)];
  double e_last = 0, e_loglin = 0;
  for (int j = 0; j < 4; ++j) {
    const int at = entries_through(steps, n, t - lag - j * lag / 4);
    if (at < 20) break;
    const int to = entries_through(steps, n, steps[std::size_t(at - 1)] + lag);
    const double target = forecast_last(loss, to);
    const int h = int(steps[std::size_t(to - 1)] - steps[std::size_t(at - 1)]);
    e_last += sq(forecast_last(loss, at) - target);
    e_loglin += sq(forecast_loglin(steps, loss, at, h) - target);
  }
  return e_last + e_loglin > 0 ? e_last / (e_last + e_loglin) : 0.0;
}

}  // namespace

LevelHistory level_history(const std::vector<long long>& steps, const std::vector<double>& loss,
                           int n) {
  LevelHistory h;
  h.n = n;
  h.t = steps[std::size_t(n - 1)];
  h.first_step = steps[0];
  h.last = forecast_last(loss, n);  // the level `learned` adds its change to is exactly `last`
  h.mean20 = log_mean(loss, std::max(0, n - 20), n);
  h.mean50 = log_mean(loss, std::max(0, n - 50), n);
  h.mean200 = log_mean(loss, std::max(0, n - 200), n);
  h.slope50 = window_slope(steps, loss, n, 50);
  h.slope200 = window_slope(steps, loss, n, 200);
  if (n >= 40) {
    h.log_step_slope = log_step_slope(steps, loss, n - n / 2, n);
    h.log_step_slope_all = log_step_slope(steps, loss, 0, n);
  }
  if (n >= 80) h.log_step_slope_quarter = log_step_slope(steps, loss, n - n / 4, n);
  h.noise = step_noise(loss, n, 51);
  h.noise200 = step_noise(loss, n, 201);
  h.loglin = fit_loglin(steps, loss, n);
  h.skill50 = loglin_skill(steps, loss, n, 50);
  h.skill200 = loglin_skill(steps, loss, n, 200);
  h.straight = persistence(h.loglin.slope, fit_loglin(steps, loss, n, kStraightSteps).slope);
  h.above_best = h.last - best_block(loss, n);
  h.above_recent50 = h.last - lowest_recent_block(loss, n, 50);
  h.above_recent100 = h.last - lowest_recent_block(loss, n, 100);
  h.above_recent200 = h.last - lowest_recent_block(loss, n, 200);
  return h;
}

namespace {

// The learning-rate features: lr_now, lr_at_target, anneal, lr_ahead, lr_change (0 when the
// series does not reach t + h).
struct LrAhead {
  bool known = false;
  double now = 0, at_target = 0, anneal = 0, ahead = 0, change = 0;
};

LrAhead lr_ahead(const LevelHistory& hist, const std::vector<long long>& steps,
                 const std::vector<double>& lr, int h) {
  LrAhead a;
  const int n = hist.n;
  if (lr.empty() || steps.back() < hist.t + h) return a;
  double peak = 0, past = 0;
  for (int i = 0; i < n; ++i) peak = std::max(peak, lr[std::size_t(i)]), past += lr[std::size_t(i)];
  peak = std::max(peak, 1e-30);
  const double now = lr[std::size_t(n - 1)];
  double sum = 0, drop = 0, end = now;
  int count = 0;
  for (std::size_t i = std::size_t(n); i < steps.size() && steps[i] <= hist.t + h; ++i) {
    sum += lr[i];
    drop += std::max(now - lr[i], 0.0);
    end = lr[i];
    ++count;
  }
  if (count == 0) return a;
  a.known = true;
  a.now = now / peak;
  a.at_target = end / peak;
  a.anneal = drop / double(count) / peak;
  a.ahead = sum / std::max(past, 1e-30);
  a.change = now > 0 ? std::max(std::log(std::max(end, 1e-30) / now), -7.0) : 0.0;
  return a;
}

}  // namespace

LevelFeatures level_features(const LevelHistory& hist, const std::vector<long long>& steps,
                             const std::vector<double>& lr, int h) {
  const double lh = std::log(double(h));
  const double trend50 = hist.slope50 * h, trend200 = hist.slope200 * h;
  const double since = double(hist.t - hist.first_step) + 1.0;
  const double ahead_log = std::log((since + h) / since);
  const double trend_log = hist.log_step_slope * ahead_log;
  const double d50 = hist.mean50 - hist.last, d200 = hist.mean200 - hist.last;
  const LrAhead a = lr_ahead(hist, steps, lr, h);
  // `loglin`'s change, held within ±kLoglinChangeCap: a line through a spike extrapolates without
  // bound, and a linear model would carry that into the forecast
  const double loglin_change =
      std::clamp(hist.loglin.at(h) - hist.last, -kLoglinChangeCap, kLoglinChangeCap);
  LevelFeatures f;
  f.last = hist.last;
  f.x = {1.0,
         d50,
         d200,
         d50 * lh / 5,
         trend50,
         trend200,
         trend_log,
         hist.noise,
         hist.noise * lh,
         hist.above_best,
         a.anneal,
         a.anneal * hist.noise * 10,
         a.change * hist.noise,
         a.ahead,
         a.ahead * trend_log,
         a.now,
         a.at_target,
         a.anneal * lh,
         a.known ? 1.0 : 0.0,
         lh / 5,
         std::log(since) / 8,
         std::min(trend50, 0.0),
         std::min(trend_log, 0.0),
         hist.mean20 - hist.last,
         hist.noise200,
         hist.above_recent50,
         hist.above_recent100,
         hist.above_recent200,
         hist.log_step_slope_all * ahead_log,
         hist.log_step_slope_quarter * ahead_log,
         trend50 * persistence(hist.slope50, hist.slope200),
         trend_log * persistence(hist.log_step_slope_quarter, hist.log_step_slope),
         hist.log_step_slope_all * ahead_log *
             persistence(hist.log_step_slope, hist.log_step_slope_all),
         loglin_change,
         loglin_change * hist.skill50,
         loglin_change * hist.skill200,
         loglin_change * hist.skill50 * hist.straight,
         loglin_change * hist.skill200 * hist.straight};
  return f;
}

}  // namespace hpt::forecast
