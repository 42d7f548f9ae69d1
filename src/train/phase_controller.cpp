#include "train/phase_controller.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpt::train {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Warmup:
      return "warmup";
    case Phase::Full:
      return "full";
    case Phase::Predict:
      return "predict";
    case Phase::Correct:
      return "correct";
  }
  return "?";
}

PhaseController::PhaseController(const HybridSettings& settings) : settings_(settings) {
  HPT_REQUIRE(
      settings_.full_steps >= 1 && settings_.correct_steps >= 1 && settings_.max_horizon >= 1,
      "PhaseController: block lengths must be positive");
  cap_ = settings_.max_horizon;
  if (settings_.warmup > 0)
    start(Phase::Warmup, int(std::min<std::int64_t>(settings_.warmup, 1 << 30)));
  else
    start(Phase::Full, settings_.full_steps);
}

void PhaseController::gate_decision(const bool opened) {
  ++counters_.gate_asked;
  if (opened) ++counters_.gate_opened;
}

void PhaseController::start(Phase p, int steps) {
  phase_ = p;
  left_ = steps;
  lead_ = 0;
  ++counters_.blocks;
}

bool PhaseController::real_step_done() {
  HPT_REQUIRE(phase_ != Phase::Predict, "PhaseController: a real step inside a predict block");
  if (settings_.retry_after > 0 && cap_ < settings_.max_horizon &&
      ++real_since_rollback_ >= settings_.retry_after) {
    cap_ = std::min(settings_.max_horizon, 2 * cap_);
    real_since_rollback_ = 0;
  }
  return --left_ <= 0;
}

bool PhaseController::predicted_step_done() {
  HPT_REQUIRE(phase_ == Phase::Predict,
              "PhaseController: a predicted step outside a predict block");
  ++lead_;
  ++counters_.predicted_steps;
  return --left_ <= 0;
}

void PhaseController::enter_predict(int horizon) {
  HPT_REQUIRE(horizon >= 1 && horizon <= cap_ && may_predict(),
              "PhaseController: predict block not allowed here");
  start(Phase::Predict, horizon);
  horizon_ = horizon;
}

void PhaseController::stay_full() {
  consecutive_ = 0;
  start(Phase::Full, settings_.full_steps);
}

void PhaseController::accepted() {
  ++counters_.accepted;
  counters_.predicted_kept += lead_;
  ++consecutive_;
  cap_ = std::min(settings_.max_horizon, 2 * cap_);
  start(Phase::Correct, settings_.correct_steps);
}

void PhaseController::rolled_back() {
  ++counters_.rolled_back;
  cap_ = std::max(1, horizon_ / 2);
  real_since_rollback_ = 0;
  consecutive_ = 0;
  start(Phase::Full, settings_.full_steps);
}

void PhaseController::warning() {
  ++counters_.warnings;
  consecutive_ = 0;
  start(Phase::Full, 2 * settings_.full_steps);
}

void PhaseController::critical(std::int64_t step) {
  ++counters_.criticals;
  consecutive_ = 0;
  lr_half_until_ = step + settings_.lr_halve_steps;
  start(Phase::Full, settings_.full_steps);
}

std::vector<std::int64_t> PhaseController::save() const {
  return {std::int64_t(phase_),
          left_,
          horizon_,
          lead_,
          cap_,
          consecutive_,
          lr_half_until_,
          counters_.blocks,
          counters_.accepted,
          counters_.rolled_back,
          counters_.predicted_steps,
          counters_.warnings,
          counters_.criticals,
          counters_.predicted_kept,
          real_since_rollback_,
          counters_.gate_asked,
          counters_.gate_opened};
}

void PhaseController::restore(const std::vector<std::int64_t>& s) {
  // Checkpoints written before the gate counters existed hold two numbers less, before the retry
  // counter three.
  const std::size_t n = s.size();
  HPT_REQUIRE(n == std::size_t(kStateSize) || n == std::size_t(kStateSize) - 2 ||
                  n == std::size_t(kStateSize) - 3,
              "PhaseController::restore: wrong state size");
  phase_ = Phase(s[0]);
  left_ = int(s[1]), horizon_ = int(s[2]), lead_ = int(s[3]), cap_ = int(s[4]);
  consecutive_ = int(s[5]);
  lr_half_until_ = s[6];
  counters_ = {s[7], s[8], s[9], s[10], s[11], s[12], s[13]};
  real_since_rollback_ = n > 14 ? s[14] : 0;
  if (n == std::size_t(kStateSize)) counters_.gate_asked = s[15], counters_.gate_opened = s[16];
}

}  // namespace hpt::train
