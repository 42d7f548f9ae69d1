#pragma once
// When a stop rule stops a judged run, in words: the console line of forecast mode's stop list and
// of a live watch's start.
#include <string>

#include "forecast/stop_rule.hpp"

namespace hpt::app {

// below_probability: 1 - forecast.stop_confidence; quantile: forecast.stop_quantile (rule both).
std::string stop_rule_words(forecast::StopRule rule, double below_probability, double quantile);

}  // namespace hpt::app
