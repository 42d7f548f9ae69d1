#include "forecast/stop_rule_words.hpp"

#include <sstream>

namespace hpt::forecast {

namespace {

std::string fmt4(double v) {
  std::ostringstream out;
  out.precision(4);
  out << v;
  return out.str();
}

}  // namespace

std::string stop_rule_words(StopRule rule, double below_probability, double quantile) {
  const std::string probability = "P(beat best other) < " + fmt4(below_probability);
  switch (rule) {
    case StopRule::kBoth:
      return "forecast final median and current level both above the " + fmt4(quantile) +
             " quantile of the other runs' of the group";
    case StopRule::kMedian:
      return probability + ", or forecast final median above the others' median";
    case StopRule::kProbability:
      break;
  }
  return probability;
}

}  // namespace hpt::forecast
