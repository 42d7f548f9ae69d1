#pragma once
// The model family: its deck options ([model]) and its styles (mlp).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/model/model.hpp"

namespace hpt {

void declare_model_options(OptionSchema& schema);
void register_model_styles(Registry<Model>& registry);

}  // namespace hpt
