#pragma once
// The update-predictor family: its deck options ([update]) and its styles (linear, quadratic,
// extrapolate, none).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/update/update_predictor.hpp"

namespace hpt {

void declare_update_options(OptionSchema& schema);
void register_update_styles(Registry<UpdatePredictor>& registry);
// Parameter-sized buffers the deck's update style keeps (for the memory estimate before any
// allocation).
int update_parameter_copies(const Config& config);

}  // namespace hpt
