#pragma once
// The encoder styles and their deck options (docs/architecture.md#styles).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/encoder/encoder.hpp"

namespace hpt {

// [encoder] style, loss_history, grad_history, clamp.
void declare_encoder_options(OptionSchema& schema);

void register_encoder_styles(Registry<Encoder>& registry);

// The telemetry rings and feature rows of `runs` runs (leading terms).
double encoder_history_bytes(const Config& config, double runs);

}  // namespace hpt
