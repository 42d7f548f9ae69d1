#pragma once
// Assembles the option schema of the whole application: [run], [output] and every style family's
// and mode's own options.
#include "core/config.hpp"

namespace hpt::app {

OptionSchema build_schema();

}  // namespace hpt::app
