#include "app/stop_rule_words.hpp"

#include "io/console.hpp"

namespace hpt::app {

std::string stop_rule_words(forecast::StopRule rule, double below_probability, double quantile) {
  const std::string probability = "P(beat best other) < " + io::fmt(below_probability);
  switch (rule) {
    case forecast::StopRule::kBoth:
      return "forecast final median and current level both above the " + io::fmt(quantile) +
             " quantile of the other runs' of the group";
    case forecast::StopRule::kMedian:
      return probability + ", or forecast final median above the others' median";
    case forecast::StopRule::kProbability:
      break;
  }
  return probability;
}

}  // namespace hpt::app
