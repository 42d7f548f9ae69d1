#pragma once
// `law`: a schedule-aware loss law fitted per run (docs/method.md#schedule-aware-law), after Tissue
// et al. 2024 ("Scaling law with learning rate annealing"):
//   L(s) = L0 + A * S1(s)^-alpha - C * S2(s)
// with S1 the forward area (the sum of the learning rates up to step s) and S2 the annealing area
// (the sum over steps of m_s = lambda * m_{s-1} + (eta_{s-1} - eta_s): the learning-rate decreases,
// remembered with momentum lambda). The planned learning rate of every future step comes from the
// run's `lr` series (a trainer knows its schedule); without one, eta = 1 and the law is a power law
// in the step. L0, A, C >= 0 by least squares of relative errors at each alpha of a grid.
#include <vector>

namespace hpt::forecast {

constexpr double kLawMomentum = 0.999;  // lambda of the annealing area (the paper's value)

// S1 and S2 at every entry of a run (steps strictly increasing; lr empty: 1 at every step). Gaps
// between entries count their steps at the later entry's rate.
struct ScheduleAreas {
  std::vector<double> forward, annealing;
};
ScheduleAreas schedule_areas(const std::vector<long long>& steps, const std::vector<double>& lr);

struct ScheduleLaw {
  double L0 = 0, A = 0, alpha = 0, C = 0;
  double lo = 0, hi = 0;  // the forecast is kept in [lo, hi]: the history's range, widened
  bool ok = false;        // false with fewer than 4 points or no fit
  double operator()(double forward, double annealing) const;
};

// Fits the law to the means of consecutive blocks of 20 entries of the first `n` entries.
ScheduleLaw fit_schedule_law(const std::vector<double>& loss, const ScheduleAreas& areas, int n);

// `law`: log of the law's mean over the target window of t + h (entries of the run's own future
// schedule where the file has them, else the last learning rate held); `last` when no fit.
double forecast_law(const std::vector<long long>& steps, const std::vector<double>& loss,
                    const std::vector<double>& lr, const ScheduleAreas& areas,
                    const ScheduleLaw& law, int n, int h);

}  // namespace hpt::forecast
