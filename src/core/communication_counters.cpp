#include "core/communication_counters.hpp"

namespace hpt {

const char* traffic_name(Traffic t) {
  switch (t) {
    case Traffic::Gradient:
      return "gradient";
    case Traffic::Loss:
      return "loss";
    case Traffic::Evaluation:
      return "evaluation";
    case Traffic::Control:
      return "control";
  }
  return "?";
}

CollectiveCount CommunicationCounters::total() const {
  CollectiveCount sum;
  for (const CollectiveCount& c : by_traffic) {
    sum.calls += c.calls;
    sum.bytes += c.bytes;
    sum.seconds += c.seconds;
  }
  return sum;
}

CommunicationCounters CommunicationCounters::since(const CommunicationCounters& earlier) const {
  CommunicationCounters d;
  for (std::size_t k = 0; k < by_traffic.size(); ++k) {
    d.by_traffic[k].calls = by_traffic[k].calls - earlier.by_traffic[k].calls;
    d.by_traffic[k].bytes = by_traffic[k].bytes - earlier.by_traffic[k].bytes;
    d.by_traffic[k].seconds = by_traffic[k].seconds - earlier.by_traffic[k].seconds;
  }
  return d;
}

}  // namespace hpt
