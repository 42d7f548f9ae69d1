#pragma once
// Data-parallel training (docs/mpi.md): every process computes the loss and gradient of its shard
// of the global minibatch; these helpers make them the global batch's on every process, so the
// optimizer and every decision from telemetry are identical everywhere.
#include <cstdint>
#include <vector>

#include "core/communicator.hpp"
#include "core/types.hpp"
#include "kernels/losses.hpp"

namespace hpt::train {

// The mean of the processes' shard losses and accuracies (equal shards: the global batch's).
LossValue mean_over_ranks(const Communicator& comm, LossValue shard);

// The gradient becomes the mean of the processes' shard gradients: one allreduce (staged through
// host memory) and a scale by 1 / size. Nothing happens on one process.
void average_gradient(const Communicator& comm, const View1<real>& gradient);

// The stop signal as rank 0 has it (each process may have received it at another step).
int stop_signal_of_root(const Communicator& comm, int own_signal);

// Every process's FNV-1a digests, indexed by rank: of its parameters and of its decisions so far.
struct RankDigests {
  std::vector<std::uint64_t> parameters, decisions;
};

// Gathers every process's digests (one allreduce of 2 x size numbers); InternalError unless all
// processes hold bit-identical parameters and took the same decisions.
RankDigests check_identical_state(const Communicator& comm, const View1<real>& parameters,
                                  std::uint64_t decisions);

}  // namespace hpt::train
