#pragma once
// The scoring target of run.mode = forecast and the three baseline forecasters it is compared with.
// All work on one run's curve (steps strictly increasing, losses >= 0) and use only the first `n`
// entries (the history up to and including the origin step t = steps[n-1]). Forecasts are of the
// natural log of the loss; losses are floored at kMinLoss before the log.
#include <vector>

namespace hpt::forecast {

constexpr double kMinLoss = 1e-12;
// The target window of a forecast for step t + h: steps t+h-kTargetBefore .. t+h+kTargetAfter.
constexpr int kTargetBefore = 4;
constexpr int kTargetAfter = 5;
constexpr int kLastWindow = 10;    // `last`: mean of the newest 10 losses
constexpr int kLogLinSteps = 100;  // `loglin`: the line is fitted over steps (t - 100, t]
constexpr int kPowerBin = 20;      // `power`: fitted to means of 20 consecutive entries

// log of the mean loss over steps t+h-4 .. t+h+5, or NaN unless the run has every one of them.
double target_log_loss(const std::vector<long long>& steps, const std::vector<double>& loss,
                       long long t, int h);

// `last`: log of the mean of the newest min(10, n) losses.
double forecast_last(const std::vector<double>& loss, int n);

// `loglin`'s line: log loss at t + h = mean + slope * (h - centre), h in steps after t; t_stat is
// |slope| over its standard error from the line's own residuals (0 with fewer than 4 entries).
struct LogLinLine {
  double mean = 0, centre = 0, slope = 0, t_stat = 0;
  double at(double h) const { return mean + slope * (h - centre); }
};
// The least-squares line of log loss against step over the entries with step in (t - window, t]
// (`loglin`'s is 100 steps); a flat line at `last` when fewer than two entries (or one distinct
// step) are in range.
LogLinLine fit_loglin(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                      int window = kLogLinSteps);

// `loglin`: fit_loglin's line evaluated at t + h.
double forecast_loglin(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                       int h);

// L(s) = a + b s^-c with a, b >= 0 and c in [kPowerMinC, kPowerMaxC].
constexpr double kPowerMinC = 0.01;
constexpr double kPowerMaxC = 3.0;
struct PowerLaw {
  double a = 0, b = 0, c = 0;
  double log_rss = 0;  // sum of squared log residuals of the fit
  bool ok = false;     // false when fewer than 3 points or no positive fit
  double operator()(double s) const;
};
// Fit to points (s_i > 0, L_i > 0) minimising the squared error of log L: for each c of a grid
// (then a golden-section refinement around the best grid value), a and b come from the least
// squares of L_i = a + b s_i^-c weighted by 1/L_i^2 (relative errors, the first-order log error),
// constrained to a, b >= 0 (else the better of the two boundary fits a = 0 or b = 0); the c whose
// fit has the smallest log-space residual wins.
PowerLaw fit_power_law(const std::vector<double>& s, const std::vector<double>& L);

// `power`: fit_power_law to the means (step + 1, loss) of consecutive blocks of 20 entries of the
// history (a trailing partial block is dropped), evaluated at step t + h + 1 (steps counted from 1
// so that step 0 is allowed); `last` when the fit fails (fewer than 3 blocks).
double forecast_power(const std::vector<long long>& steps, const std::vector<double>& loss, int n,
                      int h);
// The same in two parts, so that every horizon of one origin shares one fit: the fit of the first
// n entries' blocks, then its forecast at horizon h (`last` when the fit failed).
PowerLaw fit_power_history(const std::vector<long long>& steps, const std::vector<double>& loss,
                           int n);
double forecast_power(const PowerLaw& fit, const std::vector<long long>& steps,
                      const std::vector<double>& loss, int n, int h);

// The interval of a point forecaster from its own past errors: the realised signed errors (target -
// forecast) are kept sorted; the interval of a new point forecast f is [f + e_lo, f + e_hi] with
// e_lo, e_hi their empirical `lo`/`hi` quantiles (numpy's linear interpolation), and undefined
// (NaN) until kMinErrors errors have been realised.
class EmpiricalErrors {
 public:
  static constexpr int kMinErrors = 10;
  void add(double signed_error);
  // The same as add() of each in turn, merged at once (O(count + b log b), not O(count * b)).
  // Non-finite errors are skipped by both.
  void add_batch(std::vector<double> signed_errors);
  int count() const { return int(sorted_.size()); }
  // The p-quantile of the errors so far (NaN below kMinErrors).
  double quantile(double p) const;

 private:
  std::vector<double> sorted_;
};

}  // namespace hpt::forecast
