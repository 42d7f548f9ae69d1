#pragma once
// Settings of the hybrid loop (deck sections [hybrid], [predict], [monitor]); docs/method.md.
#include <cstdint>
#include <vector>

#include "train/divergence_monitor.hpp"

namespace hpt::train {

struct HybridSettings {
  std::int64_t warmup = 100;     // real steps before the first decision
  int full_steps = 20;           // length of a Full block
  int correct_steps = 5;         // length of a Correct block
  int max_horizon = 50;          // longest predict block
  int max_predict_blocks = 5;    // predict blocks in a row before a Full block
  double tol = 0.01;             // accept: probe loss <= (1 + tol) x the loss before the block
  double confidence = 1.0;       // enter: forecast std of log L at Y <= confidence x improvement
  double min_coverage = 0.8;     // enter: realised coverage of the 90 % interval at Y
  int min_scored = 5;            // forecasts scored at Y before its coverage counts
  bool probe_every_step = true;  // a forward pass at every predicted step (else only at the end)
  int probe_rows = 512;          // validation rows of the fixed probe set
  int lr_halve_steps = 50;       // steps at half learning rate after a critical alarm
  int retry_after = 0;           // real steps after which a halved horizon cap doubles (0: never)
  MonitorThresholds monitor;     // the divergence monitor's thresholds
  bool zero_momentum_after_accept = false;  // zero the optimizer's first moment after a kept block
  // Fractions of a block's predicted motion tried on the probe set at its end; the best is kept.
  std::vector<double> step_scales{1.0};
};

}  // namespace hpt::train
