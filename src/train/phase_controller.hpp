#pragma once
// The hybrid loop's phases, Warmup -> Full -> (Predict -> Correct)* -> Full ..., as a host state
// machine with no device work, so each transition rule is testable on its own. The loop tells it
// what happened (a real step, a predicted step, the outcome of a block, an alarm) and asks it what
// the next step is; at the end of a Warmup, Full or Correct block it asks the caller to decide
// whether to enter a predict block (enter_predict) or to run a Full block (stay_full).
#include <cstdint>
#include <vector>

#include "train/hybrid_settings.hpp"

namespace hpt::train {

enum class Phase : int { Warmup = 0, Full = 1, Predict = 2, Correct = 3 };
const char* phase_name(Phase p);

class PhaseController {
 public:
  explicit PhaseController(const HybridSettings& settings);

  Phase phase() const { return phase_; }
  int horizon() const { return horizon_; }  // length of the current predict block
  int lead() const { return lead_; }        // predicted steps made in the current block
  // Largest predict horizon allowed next (halved by a rollback, doubled back by an accept, and
  // with retry_after > 0 also by every retry_after real steps without a rollback, so that a run
  // whose cap fell below the shortest horizon tries again later).
  int horizon_cap() const { return cap_; }
  // A predict block may follow the block that just ended (not after max_predict_blocks in a row).
  bool may_predict() const { return consecutive_ < settings_.max_predict_blocks; }

  // After a real step: true when its block ended and the caller must decide.
  bool real_step_done();
  // After a predicted step: true when it was the block's last (the caller verifies it).
  bool predicted_step_done();

  // The forecast gate was consulted at a block's end; `opened`: it chose a predict block.
  void gate_decision(bool opened);
  void enter_predict(int horizon);
  void stay_full();    // a Full block of full_steps
  void accepted();     // the predict block passed: a Correct block follows
  void rolled_back();  // it failed: halve the next horizon, run a Full block
  void warning();      // a Full block of 2 x full_steps now
  // A critical alarm or a non-finite value at `step`: a Full block, and the learning rate halved
  // for the next lr_halve_steps steps.
  void critical(std::int64_t step);
  double lr_factor(std::int64_t step) const { return step <= lr_half_until_ ? 0.5 : 1.0; }
  std::int64_t lr_half_until() const { return lr_half_until_; }

  struct Counters {
    std::int64_t blocks = 0, accepted = 0, rolled_back = 0, predicted_steps = 0, warnings = 0,
                 criticals = 0, predicted_kept = 0;
    std::int64_t gate_asked = 0, gate_opened = 0;  // forecast gate decisions, and those that opened
  };
  const Counters& counters() const { return counters_; }

  // The whole state as numbers (checkpoints), and back.
  std::vector<std::int64_t> save() const;
  void restore(const std::vector<std::int64_t>& state);
  static constexpr int kStateSize = 17;

 private:
  void start(Phase p, int steps);
  HybridSettings settings_;
  Phase phase_ = Phase::Warmup;
  int left_ = 0, horizon_ = 0, lead_ = 0, cap_ = 0, consecutive_ = 0;
  std::int64_t real_since_rollback_ = 0;  // real steps since the last rollback or cap recovery
  std::int64_t lr_half_until_ = -1;
  Counters counters_;
};

}  // namespace hpt::train
