#pragma once
// Data-parallel training (docs/mpi.md): every process computes the loss and gradient of its shard
// of the global minibatch; these helpers make them the global batch's on every process, so the
// optimizer and every decision from telemetry are identical everywhere.
#include <cstdint>

#include "core/communicator.hpp"
#include "core/types.hpp"
#include "kernels/losses.hpp"

namespace hpt::train {

// The mean of the processes' shard losses and accuracies (equal shards: the global batch's).
LossValue mean_over_ranks(const Communicator& comm, LossValue shard);

// The gradient becomes the mean of the processes' shard gradients: one allreduce (staged through
// host memory) and a scale by 1 / size. Nothing happens on one process.
void average_gradient(const Communicator& comm, const View1<real>& gradient);

// Validation and the stop signal as rank 0 has them (each process validates on the same rows with
// the same parameters, so this only guards against a last-bit difference between them).
void take_from_root(const Communicator& comm, double* values, int n);
int stop_signal_of_root(const Communicator& comm, int own_signal);

// InternalError unless the parameters are bit-identical on every process; returns their checksum.
std::uint64_t check_identical_parameters(const Communicator& comm, const View1<real>& parameters);

}  // namespace hpt::train
