#include "train/data_parallel.hpp"

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "kernels/update_kernels.hpp"

namespace hpt::train {

LossValue mean_over_ranks(const Communicator& comm, LossValue shard) {
  if (comm.size() == 1) return shard;
  double sums[2] = {shard.loss, shard.accuracy};
  comm.allreduce_sum(sums, 2);
  return {sums[0] / comm.size(), sums[1] / comm.size()};
}

void average_gradient(const Communicator& comm, const View1<real>& gradient) {
  if (comm.size() == 1) return;
  comm.allreduce_sum_view(gradient);
  copy_scaled<ExecSpace, real>(ExecSpace(), gradient, gradient, 1.0 / comm.size());
}

void take_from_root(const Communicator& comm, double* values, int n) {
  comm.broadcast(values, std::size_t(n));
}

int stop_signal_of_root(const Communicator& comm, int own_signal) {
  std::int64_t signal = own_signal;
  comm.broadcast(&signal, 1);
  return int(signal);
}

std::uint64_t check_identical_parameters(const Communicator& comm, const View1<real>& parameters) {
  const std::uint64_t own = fnv1a_view(kChecksumStart, parameters);
  std::int64_t root = std::int64_t(own);
  comm.broadcast(&root, 1);
  double differing = std::uint64_t(root) == own ? 0.0 : 1.0;
  comm.allreduce_sum(&differing, 1);
  if (differing > 0)
    throw InternalError("data-parallel training: the parameters differ from rank 0's on " +
                        std::to_string(int(differing)) + " of " + std::to_string(comm.size()) +
                        " processes");
  return own;
}

}  // namespace hpt::train
