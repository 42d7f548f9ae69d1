#pragma once
// The loss curves of a sweep of training runs that run.mode = forecast replays (read by
// io/curve_files).
#include <string>
#include <vector>

namespace hpt::forecast {

struct Curve {
  std::string id;
  std::vector<long long> steps;   // strictly increasing
  std::vector<double> loss;       // finite, >= 0
  std::vector<double> grad_norm;  // empty when absent, else the length of steps
  std::vector<double> lr;         // empty when absent
  std::vector<double> val_loss;   // empty when absent (HDF5 only)
};

struct CurveSet {
  std::vector<Curve> runs;           // in file order (HDF5: sorted by id)
  std::vector<std::string> skipped;  // "run 'x': why" for each run dropped by skip_bad_runs
};

}  // namespace hpt::forecast
