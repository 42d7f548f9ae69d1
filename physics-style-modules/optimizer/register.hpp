#pragma once
// The optimizer family: its deck options ([optimizer]) and its styles (sgd, adam).
#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/optimizer/optimizer.hpp"

namespace hpt {

void declare_optimizer_options(OptionSchema& schema);
void register_optimizer_styles(Registry<Optimizer>& registry);

}  // namespace hpt
