#pragma once
// The online training step of the RSSM ensemble as bench mode times it (bench.training_sizes,
// docs/bench.md#sizes): the sizes by name, the step's FLOP count, and an ensemble that has observed
// a full window, whose step() is the forecaster's own RssmOnline::train_step() (truncated BPTT over
// the window with online bagging, then one Adam step with global-norm clipping).
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"

namespace hpt::app {

struct TrainingSize {
  std::string name;
  int members, hidden, stochastic, input, bptt;  // E, H, S, I, K
};

// Every training size of the table in docs/bench.md#sizes (forecast, default, h1024, e64).
const std::vector<TrainingSize>& training_sizes();
// Parses "a,b" into sizes (empty: none); InputError naming `key` and the unknown name otherwise.
std::vector<TrainingSize> parse_training_sizes(const std::string& list, const std::string& key);

// The model's FLOPs of one training step: forward and backward over the window
// (rssm_bptt_flops: three times the forward's 6 H (H + I) + 4 S H + 4 (H + S) per member-sample);
// the optimizer's elementwise update is not counted.
double training_step_flops(const TrainingSize& size);

class TrainingStepBench {
 public:
  // An ensemble of `size` with the deck's gru.reset and dynamics.lr, kl_weight, clip_norm, seed
  // (dynamics.bptt is the size's K), initialised with `seed`, that has observed K + 1 seeded
  // random steps, so that every step() trains on a full window.
  TrainingStepBench(const Config& config, const TrainingSize& size, std::uint64_t seed);
  // One online training step, as the training forecaster takes it after every observation.
  RssmTrainReport step() { return dynamics_.online().train_step(); }

 private:
  RssmDynamics dynamics_;
};

}  // namespace hpt::app
