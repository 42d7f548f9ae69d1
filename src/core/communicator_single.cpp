// The one-process backend of Communicator and ParallelSession (a build without HPT_ENABLE_MPI):
// rank 0 of 1, and a collective over one process leaves its data unchanged.
#include <cstdlib>

#include "core/communicator.hpp"
#include "core/parallel_session.hpp"

namespace hpt {

Communicator Communicator::world() {
  static const auto counters = std::make_shared<CommunicationCounters>();
  return Communicator(0, 1, false, counters);
}

void Communicator::allreduce_sum(double*, std::size_t, Traffic) const {}
void Communicator::allreduce_sum(float*, std::size_t, Traffic) const {}
void Communicator::allreduce_sum(std::int64_t*, std::size_t, Traffic) const {}
void Communicator::broadcast(std::int64_t*, std::size_t, Traffic, int) const {}
std::vector<double> Communicator::allgather(const std::vector<double>& mine, Traffic) const {
  return mine;
}

std::string message_passing_description() {
  return "off";
}

HostRank host_rank() {
  return {};
}

ParallelSession::ParallelSession(int&, char**&) {}
ParallelSession::~ParallelSession() = default;
void ParallelSession::abort_all(int) {}

}  // namespace hpt
