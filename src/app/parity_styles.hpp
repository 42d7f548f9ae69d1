#pragma once
// The parity styles go together (docs/method.md#parity-with-the-prototype): the prototype's
// controller needs its RSSM, its encoder, its GRU convention and frozen predicted steps, and its
// RSSM serves only that controller. InputError naming the key otherwise.
#include <string>

#include "core/config.hpp"

namespace hpt::app {

void check_parity_styles(const Config& config, const std::string& mode);

}  // namespace hpt::app
