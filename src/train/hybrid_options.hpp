#pragma once
// Deck sections of the hybrid loop ([hybrid], [predict], [monitor], [prototype]): declared and
// read here, next to the loop that uses them (docs/method.md#hybrid-training-loop).
#include "core/config.hpp"
#include "train/hybrid_settings.hpp"
#include "train/prototype_controller.hpp"

namespace hpt::train {

void declare_hybrid_options(OptionSchema& schema);
HybridSettings read_hybrid_settings(const Config& config);
// The prototype's loop (hybrid.controller = prototype): its block lengths and confidence threshold.
PrototypeSchedule read_prototype_schedule(const Config& config);

}  // namespace hpt::train
