#include "train/prototype_controller.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace hpt::train {

PrototypeDecision PrototypeController::next(const std::int64_t done, const double confidence) {
  if (!warmup_done_) {
    if (done < s_.warmup) return {Phase::Warmup, int(s_.warmup - done)};
    warmup_done_ = true;
    phase_ = Phase::Full;
  }
  if (phase_ == Phase::Predict) {
    phase_ = Phase::Correct;
    return {Phase::Correct, s_.correct_steps};
  }
  if (!had_full_) {
    had_full_ = true;
    return {Phase::Full, s_.full_steps};
  }
  if (confidence >= s_.threshold && consecutive_ < s_.max_predict_blocks) {
    phase_ = Phase::Predict;
    ++consecutive_;
    return {Phase::Predict, predict_steps(confidence)};
  }
  phase_ = Phase::Full;
  consecutive_ = 0;
  return {Phase::Full, s_.full_steps};
}

int PrototypeController::predict_steps(const double c) const {
  const double scaled = std::floor(double(s_.max_predict) * c * c);
  const int n = int(std::floor(scaled * (1.0 - std::min(0.1 * consecutive_, 0.5))));
  // max(10) first, then min(max_predict): the floor of 10 only yields to a smaller maximum.
  return std::min(std::max(n, 10), s_.max_predict);
}

void PrototypeController::warning() {
  phase_ = Phase::Full;
  consecutive_ = s_.max_predict_blocks;
}

std::vector<std::int64_t> PrototypeController::save() const {
  return {std::int64_t(phase_), warmup_done_ ? 1 : 0, had_full_ ? 1 : 0, consecutive_};
}

void PrototypeController::restore(const std::vector<std::int64_t>& v) {
  HPT_REQUIRE(v.size() == 4, "PrototypeController: wrong state size");
  phase_ = Phase(v[0]);
  warmup_done_ = v[1] != 0, had_full_ = v[2] != 0;
  consecutive_ = int(v[3]);
}

}  // namespace hpt::train
