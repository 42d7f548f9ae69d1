#pragma once
// Online calibration of forecast intervals, per horizon: adaptive conformal inference (Gibbs and
// Candes, 2021) in its multiplicative form. Each horizon keeps a width factor w = exp(theta) that
// scales the half-widths of the predicted interval around its median,
//   [q50 - w (q50 - q05), q50 + w (q95 - q50)],
// and after each realised target (err = 1 when it fell outside the interval that was issued, else
// 0) updates theta <- theta + gamma (err - miss_rate), miss_rate = 1 - coverage (0.10 for the 90 %
// interval). Misses widen, hits narrow; over any T updates the realised miss rate differs from
// miss_rate by at most (theta_T - theta_0) / (gamma T), so coverage tracks the target whatever the
// raw intervals' calibration.
#include <vector>

namespace hpt::forecast {

struct Interval {
  double lo = 0, mid = 0, hi = 0;
};

class AdaptiveConformal {
 public:
  AdaptiveConformal(int horizons, double coverage = 0.90, double gamma = 0.05);

  // The calibrated interval of horizon index k from the raw quantiles (q05, q50, q95).
  Interval apply(int k, double q05, double q50, double q95) const;
  // One realised target of horizon k: `inside` of the calibrated interval that was issued.
  void update(int k, bool inside);

  double width_factor(int k) const;
  int updates(int k) const { return updates_[std::size_t(k)]; }
  // Fraction of the realised targets of horizon k that fell inside (NaN before the first).
  double realised_coverage(int k) const;
  int horizons() const { return int(theta_.size()); }

  // The state per horizon (theta, updates, inside), for checkpoints.
  struct State {
    double theta = 0;
    long long updates = 0, inside = 0;
  };
  State state(int k) const;
  void restore(int k, const State& s);

 private:
  double miss_rate_;
  double gamma_;
  std::vector<double> theta_;
  std::vector<int> updates_;
  std::vector<int> inside_;
};

}  // namespace hpt::forecast
