#pragma once
// What the collectives of a data-parallel run cost, by what they carry (docs/mpi.md): calls, bytes
// and wall seconds. Bytes are each collective's payload (elements x element size), counted the same
// on every process; what crosses the network depends on the MPI library's algorithm.
#include <array>
#include <cstdint>

namespace hpt {

// What a collective carries.
enum class Traffic : int {
  Gradient = 0,    // the gradient allreduce of a real step
  Loss = 1,        // a minibatch's loss and accuracy (2 numbers)
  Evaluation = 2,  // a sharded validation or probe evaluation (3 numbers); a forecast origin's rows
  Control = 3      // the stop signal (1 number a step), the parameter checks at checkpoints
};
constexpr int kTrafficKinds = 4;

// "gradient", "loss", "evaluation", "control".
const char* traffic_name(Traffic t);

struct CollectiveCount {
  std::int64_t calls = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
};

struct CommunicationCounters {
  std::array<CollectiveCount, kTrafficKinds> by_traffic{};

  CollectiveCount& operator[](Traffic t) { return by_traffic[std::size_t(t)]; }
  const CollectiveCount& operator[](Traffic t) const { return by_traffic[std::size_t(t)]; }
  CollectiveCount total() const;
  // What was counted after `earlier` (a copy of these counters taken then).
  CommunicationCounters since(const CommunicationCounters& earlier) const;
};

}  // namespace hpt
