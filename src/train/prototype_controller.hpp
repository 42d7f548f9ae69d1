#pragma once
// `hybrid.controller = prototype` (docs/method.md#parity-with-the-prototype): the prototype's phase
// controller, kept for comparison. A decision is a phase and a step count (the budget the loop then
// spends): Warmup until `warmup` steps are done, then one mandatory Full block, then a Predict
// block whenever the confidence is at least `threshold` and fewer than `max_predict_blocks` predict
// blocks ran in a row, each followed by a Correct block; otherwise a Full block (which resets the
// count). A predict block has clamp(floor(floor(max_predict c^2) (1 - min(0.1 k, 0.5))), 10,
// max_predict) steps, k the predict blocks in a row including this one. A divergence warning sets
// the phase to Full and the count to its limit, so the next decision is a Full block.
#include <cstdint>
#include <vector>

#include "train/phase_controller.hpp"

namespace hpt::train {

struct PrototypeSchedule {
  std::int64_t warmup = 100;
  int full_steps = 20;
  int correct_steps = 5;
  int max_predict = 15;
  int max_predict_blocks = 5;
  double threshold = 0.85;
};

struct PrototypeDecision {
  Phase phase = Phase::Warmup;
  int steps = 0;
};

class PrototypeController {
 public:
  explicit PrototypeController(const PrototypeSchedule& schedule) : s_(schedule) {}

  // The next block, after `done` steps, given the predictor's confidence now.
  PrototypeDecision next(std::int64_t done, double confidence);
  int predict_steps(double confidence) const;
  void warning();  // the next decision is a Full block

  Phase phase() const { return phase_; }
  int predict_blocks_in_a_row() const { return consecutive_; }

  std::vector<std::int64_t> save() const;
  void restore(const std::vector<std::int64_t>& state);

 private:
  PrototypeSchedule s_;
  Phase phase_ = Phase::Warmup;
  bool warmup_done_ = false, had_full_ = false;
  int consecutive_ = 0;
};

}  // namespace hpt::train
