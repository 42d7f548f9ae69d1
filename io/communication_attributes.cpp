#include "io/communication_attributes.hpp"

namespace hpt::io {

namespace {

std::string key(const std::string& prefix, int kind, const char* what) {
  return prefix + traffic_name(Traffic(kind)) + "_" + what;
}

}  // namespace

void write_communication(H5Group& g, const CommunicationCounters& counters,
                         const std::string& prefix) {
  for (int k = 0; k < kTrafficKinds; ++k) {
    const CollectiveCount& c = counters[Traffic(k)];
    g.write_int_attribute(key(prefix, k, "calls"), c.calls);
    g.write_int_attribute(key(prefix, k, "bytes"), c.bytes);
    g.write_double_attribute(key(prefix, k, "seconds"), c.seconds);
  }
  const CollectiveCount total = counters.total();
  g.write_int_attribute(prefix + "calls", total.calls);
  g.write_int_attribute(prefix + "bytes", total.bytes);
  g.write_double_attribute(prefix + "seconds", total.seconds);
}

CommunicationCounters read_communication(const H5Group& g, const std::string& prefix) {
  CommunicationCounters counters;
  for (int k = 0; k < kTrafficKinds; ++k) {
    CollectiveCount& c = counters[Traffic(k)];
    c.calls = g.read_int_attribute(key(prefix, k, "calls"));
    c.bytes = g.read_int_attribute(key(prefix, k, "bytes"));
    c.seconds = g.read_double_attribute(key(prefix, k, "seconds"));
  }
  return counters;
}

}  // namespace hpt::io
