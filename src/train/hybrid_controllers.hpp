#pragma once
// The hybrid loop's controllers, chosen by name with hybrid.controller through a registry like the
// styles: hpt (verified predict blocks) and prototype (the earlier prototype's loop, for parity).
// Full training and the comparison's replay are not deck choices; the trainer builds them directly.
#include <cstdint>

#include "core/registry.hpp"
#include "physics-style-modules/dynamics/rssm_prototype.hpp"
#include "train/lr_schedule.hpp"
#include "train/step_policy.hpp"

namespace hpt::train {

struct TrainState;

// What a controller is built from besides the deck.
struct ControllerInputs {
  const TrainState& state;
  const LrSchedule& schedule;
  std::int64_t total_steps;
  PrototypeRssm* prototype_rssm;  // the prototype's forecaster (hybrid.controller = prototype)
};

using ControllerRegistry = Registry<StepPolicy, const ControllerInputs&>;

void register_hybrid_controllers(ControllerRegistry& registry);
// Whether the named controller trains the prototype's RSSM instead of hpt's forecaster.
bool uses_prototype_rssm(const std::string& controller);

}  // namespace hpt::train
