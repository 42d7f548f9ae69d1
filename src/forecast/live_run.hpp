#pragma once
// A run of a live sweep (run.mode = watch) as read so far from its growing curve file: its curve up
// to the newest complete row, where it comes from, and whether its file still grows.
#include <string>
#include <vector>

#include "forecast/curve.hpp"

namespace hpt::forecast {

struct LiveRun {
  Curve curve;                // id, group, steps, loss, lr, val_steps, val_loss read so far
  std::string file;           // the file it is read from (several runs share a wide CSV)
  std::string job;            // its batch job id, from a `job` column or the file name ("" if none)
  bool gone = false;          // its file vanished
  bool ended = false;         // its loss turned non-finite: the curve ends before it
  long long ended_at = -1;    // the step of that non-finite loss
  long long planned_end = 0;  // its planned last step, from a `final_step` column (0: not given)
  double grown_at = 0;        // seconds since the watch began when a row was last added
  // The planned learning rate of every step (its <run>.lr file; empty when there is none): what a
  // trainer knows of its future, and what the forecast of its final loss needs.
  std::vector<long long> plan_steps;
  std::vector<double> plan_lr;
};

}  // namespace hpt::forecast
